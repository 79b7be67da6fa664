/**
 * The real programs some suites run against (Chromium, v2ray and v2ctl, BIND, pebble, Python's
 * grpcio, openssl). On a developer's machine a suite whose peer is missing skips, with the reason
 * in its name. With CI=true (.ci/run exports it, and installs every peer) a missing peer is an
 * error when the suite is collected: a green CI run proves that every suite ran.
 */
export class MissingPeerError extends Error {}

/** Says that `peer` is missing: nothing locally (the caller skips), an error with CI=true. */
export function peerMissing(peer: string, reason: string, env: NodeJS.ProcessEnv = process.env): void {
  if (env.CI === 'true')
    throw new MissingPeerError(
      `${peer} is missing (${reason}): with CI=true a suite that needs it fails instead of skipping; install it (.ci/run says how)`,
    );
}

/** `found` when the peer is there; else null, after peerMissing (which throws with CI=true). */
export function requirePeer<T>(peer: string, found: T | null | undefined, reason = 'not found'): T | null {
  if (found !== null && found !== undefined) return found;
  peerMissing(peer, reason);
  return null;
}

import { UnprocessableError } from '../errors.ts';

/**
 * The svc-agent release this control plane ships with: apps/agent/package.json's version (a
 * test keeps the two equal). Raised with the agent's version; the minor moves with every
 * release whose agent changed (docs/upgrades.md).
 */
export const AGENT_RELEASE = '0.2.0';

/**
 * Where an agent's reported version (EnrollRequest/Hello.agent_version) stands against the
 * release (docs/agent.md, "Versions"):
 * - `current`: this release's major.minor;
 * - `previous`: the minor before it (at a major's .0, any minor of the major before): supported,
 *   and tested against this gateway built from its own source (apps/agent/test/compat);
 * - `newer`: an agent released after this gateway (the contract only ever adds fields, spec 9.3): served;
 * - `too-old`: anything older, refused at Enroll and Sync with FAILED_PRECONDITION;
 * - `other`: not a svc-agent version (another implementation of the contract names itself as
 *   it likes): served, since the contract, not our version, is what it speaks.
 */
export type AgentVersionStanding = 'current' | 'previous' | 'newer' | 'too-old' | 'other';

const SEMVER = /^v?(\d{1,9})\.(\d{1,9})\.(\d{1,9})(?:[-+][0-9A-Za-z.+-]*)?$/;

const parse = (v: string): { major: number; minor: number } | null => {
  const m = SEMVER.exec(v.trim());
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : null;
};

export function agentVersionStanding(reported: string, release: string = AGENT_RELEASE): AgentVersionStanding {
  const agent = parse(reported);
  const ours = parse(release);
  if (!agent || !ours) return 'other';
  if (agent.major === ours.major && agent.minor === ours.minor) return 'current';
  if (agent.major > ours.major || (agent.major === ours.major && agent.minor > ours.minor)) return 'newer';
  if (ours.minor > 0 ? agent.major === ours.major && agent.minor === ours.minor - 1 : agent.major === ours.major - 1) return 'previous';
  return 'too-old';
}

/**
 * Spec 9.4, the node view's `outdated_agent`: an agent of an older minor than the release
 * (served while it is the previous one, refused when older) is to be upgraded before the next
 * release. Unknown and other agents' versions are not flagged.
 */
export function isOutdatedAgent(reported: string | null, release: string = AGENT_RELEASE): boolean {
  if (reported === null) return false;
  const standing = agentVersionStanding(reported, release);
  return standing === 'previous' || standing === 'too-old';
}

/** The versions a gateway of `release` serves, in words ("0.2.x and 0.1.x"). */
export function supportedAgentVersions(release: string = AGENT_RELEASE): string {
  const ours = parse(release);
  if (!ours) return release;
  const previous = ours.minor > 0 ? `${ours.major}.${ours.minor - 1}.x` : `${ours.major - 1}.x`;
  return ours.major === 0 && ours.minor === 0 ? `${ours.major}.0.x` : `${ours.major}.${ours.minor}.x and ${previous}`;
}

/**
 * Enroll and Sync refuse an agent older than the previous minor (FAILED_PRECONDITION), before
 * anything is written: an enrollment token stays usable for the upgraded agent.
 */
export function assertAgentVersionServed(reported: string, release: string = AGENT_RELEASE): void {
  if (agentVersionStanding(reported, release) !== 'too-old') return;
  throw new UnprocessableError(
    `svc-agent ${reported} is too old for this control plane (agents ${supportedAgentVersions(release)} are served): upgrade the agent on this node`,
  );
}

import { UnprocessableError } from '../errors.ts';

/**
 * The svc-agent release this control plane ships with: apps/agent/package.json's version (a
 * test keeps the two equal). Raised with the agent's version; the minor moves with every
 * release whose agent changed (docs/upgrades.md).
 */
export const AGENT_RELEASE = '0.2.0';

/**
 * Where an agent's reported version (EnrollRequest/Hello.agent_version) stands against the
 * release (docs/agent.md, "Versions"). Every agent that speaks `svc.controlplane.v1` is served
 * whatever it names itself (spec 9.3: within v1 fields are only added, so every v1 agent is
 * compatible by construction); the standing only decides what the node view flags (spec 9.4):
 * - `current`: this release's major.minor;
 * - `previous`: the minor before it (at a major's .0, any minor of the major before), tested
 *   against this gateway built from its own source (apps/agent/test/compat);
 * - `newer`: an agent released after this gateway;
 * - `older`: anything older than the previous minor (or another implementation that names itself
 *   with such a semver, e.g. `0.0.0-acceptance`);
 * - `other`: not a semver at all (another implementation names itself as it likes).
 */
export type AgentVersionStanding = 'current' | 'previous' | 'newer' | 'older' | 'other';

const SEMVER = /^v?(\d{1,9})\.(\d{1,9})\.(\d{1,9})(?:([-+])([0-9A-Za-z.+-]*))?$/;

interface Semver {
  major: number;
  minor: number;
  patch: number;
  /** A pre-release (`1.2.0-rc.1`) comes before its release; build metadata (`+x`) does not count. */
  pre: boolean;
  /** The pre-release's identifiers (`rc.1`), '' for a release. */
  preText: string;
}

const parse = (v: string): Semver | null => {
  const m = SEMVER.exec(v.trim());
  if (!m) return null;
  const pre = m[4] === '-';
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), pre, preText: pre ? ((m[5] ?? '').split('+')[0] ?? '') : '' };
};

/**
 * Semver order of two versions (negative: a is older), for the upgrade offer: major, minor,
 * patch, then a pre-release before its release, and pre-releases by their identifiers (numeric
 * ones as numbers). Versions that are not semvers compare equal (nothing is offered for them).
 */
export function compareAgentVersions(a: string, b: string): number {
  const x = parse(a);
  const y = parse(b);
  if (!x || !y) return 0;
  for (const k of ['major', 'minor', 'patch'] as const) if (x[k] !== y[k]) return x[k] - y[k];
  if (x.pre !== y.pre) return x.pre ? -1 : 1;
  const xs = x.preText.split('.');
  const ys = y.preText.split('.');
  for (let i = 0; i < Math.max(xs.length, ys.length); i++) {
    const [p, q] = [xs[i], ys[i]];
    if (p === q) continue;
    if (p === undefined) return -1;
    if (q === undefined) return 1;
    const [pn, qn] = [/^\d+$/.test(p), /^\d+$/.test(q)];
    if (pn && qn) return Number(p) - Number(q);
    if (pn !== qn) return pn ? -1 : 1;
    return p < q ? -1 : 1;
  }
  return 0;
}

/** Whether `v` is a version this module reads (the config's minimum must be one). */
export const isSemver = (v: string): boolean => parse(v) !== null;

export function agentVersionStanding(reported: string, release: string = AGENT_RELEASE): AgentVersionStanding {
  const agent = parse(reported);
  const ours = parse(release);
  if (!agent || !ours) return 'other';
  if (agent.major === ours.major && agent.minor === ours.minor) return 'current';
  if (agent.major > ours.major || (agent.major === ours.major && agent.minor > ours.minor)) return 'newer';
  if (ours.minor > 0 ? agent.major === ours.major && agent.minor === ours.minor - 1 : agent.major === ours.major - 1) return 'previous';
  return 'older';
}

/**
 * Spec 9.4, the node view's `outdated_agent`: an agent of an older minor than the release is to
 * be upgraded before the next release. Unknown and other agents' versions are not flagged.
 */
export function isOutdatedAgent(reported: string | null, release: string = AGENT_RELEASE): boolean {
  if (reported === null) return false;
  const standing = agentVersionStanding(reported, release);
  return standing === 'previous' || standing === 'older';
}

/**
 * Whether a node's agent has just become outdated (its reported version changed to one that
 * isOutdatedAgent flags): the moment `node.agent_outdated` is raised, once per version a node
 * reports, not on every reconnect.
 */
export function agentBecameOutdated(previous: string | null, reported: string, release: string = AGENT_RELEASE): boolean {
  return previous !== reported && isOutdatedAgent(reported, release);
}

/**
 * The operator's opt-in floor (`grpc.min_agent_version`, unset by default): an agent whose
 * version is a semver below it is refused, FAILED_PRECONDITION on the wire, saying so. Applied
 * only after the caller authenticated (a valid enrollment token, a node's current certificate),
 * so a stranger learns nothing from it and a bad token is UNAUTHENTICATED whatever the version.
 * A version that is not a semver (another implementation of the contract) is not svc-agent's
 * and passes.
 */
export function assertAgentVersionAllowed(reported: string, minimum: string | undefined): void {
  if (!isBelowMinimum(reported, minimum)) return;
  throw new UnprocessableError(
    `agent version ${reported.trim().slice(0, 64)} is below this control plane's minimum ${minimum} (grpc.min_agent_version): upgrade the agent on this node`,
  );
}

export function isBelowMinimum(reported: string, minimum: string | undefined): boolean {
  if (minimum === undefined || !parse(reported) || !parse(minimum)) return false;
  return compareAgentVersions(reported, minimum) < 0;
}

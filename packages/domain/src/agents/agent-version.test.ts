import { describe, expect, it } from 'vitest';
import { UnprocessableError } from '../errors.ts';
import { agentUpgradeAvailable } from './agent-upgrades.ts';
import {
  agentBecameOutdated,
  agentVersionStanding,
  assertAgentVersionAllowed,
  compareAgentVersions,
  isBelowMinimum,
  isOutdatedAgent,
} from './agent-version.ts';

describe('agent version standing (docs/agent.md, "Versions")', () => {
  it('against 0.2.0: 0.2.x is current, 0.1.x previous, 0.0.x older, later minors and majors newer', () => {
    const at = (v: string) => agentVersionStanding(v, '0.2.0');
    expect([at('0.2.0'), at('0.2.7'), at('0.2.1-rc.1')]).toEqual(['current', 'current', 'current']);
    expect([at('0.1.0'), at('0.1.12')]).toEqual(['previous', 'previous']);
    expect([at('0.0.9'), at('0.0.0-acceptance')]).toEqual(['older', 'older']);
    expect([at('0.3.0'), at('1.0.0')]).toEqual(['newer', 'newer']);
  });

  it('at a major’s first minor, every minor of the major before is the previous one', () => {
    const at = (v: string) => agentVersionStanding(v, '2.0.0');
    expect([at('2.0.4'), at('1.9.0'), at('1.0.0'), at('0.9.0')]).toEqual(['current', 'previous', 'previous', 'older']);
  });

  it('a version that is not a semver (another implementation of the contract) is other', () => {
    for (const v of ['', 'py-1.0', 'sim-1.0.0', '1', '0.1', 'x0.0.1']) expect(agentVersionStanding(v, '0.2.0')).toBe('other');
    expect(agentVersionStanding('v0.1.4', '0.2.0')).toBe('previous');
  });

  it('the node view flags an agent of an older minor (to upgrade before the next release), not a current, newer or unknown one', () => {
    const flagged = ['0.1.0', '0.0.3', null, '0.2.5', '0.3.0', 'py-1.0'].map((v) => isOutdatedAgent(v, '0.2.0'));
    expect(flagged).toEqual([true, true, false, false, false, false]);
  });

  it('an agent becomes outdated when the version it reports changes to an outdated one, once', () => {
    expect(agentBecameOutdated(null, '0.1.0', '0.2.0')).toBe(true);
    expect(agentBecameOutdated('0.2.0', '0.1.0', '0.2.0')).toBe(true);
    expect(agentBecameOutdated('0.1.0', '0.1.0', '0.2.0')).toBe(false);
    expect(agentBecameOutdated('0.1.0', '0.2.0', '0.2.0')).toBe(false);
    expect(agentBecameOutdated(null, 'py-1.0', '0.2.0')).toBe(false);
  });
});

describe('the opt-in floor (grpc.min_agent_version)', () => {
  it('without a floor no version is refused, however old', () => {
    for (const v of ['0.0.0-acceptance', '0.0.1', 'py-1.0', '']) expect(() => assertAgentVersionAllowed(v, undefined)).not.toThrow();
  });

  it('below the floor by major, minor, patch or pre-release is refused as unprocessable (FAILED_PRECONDITION on the wire), saying the floor', () => {
    expect(['0.1.9', '0.2.0-rc.1', '0.0.9', '0.2.0', '0.2.0+build', '0.2.1', '1.0.0'].map((v) => isBelowMinimum(v, '0.2.0'))).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
      false,
    ]);
    expect(() => assertAgentVersionAllowed('0.1.9', '0.2.0')).toThrow(UnprocessableError);
    expect(() => assertAgentVersionAllowed('0.1.9', '0.2.0')).toThrow(
      "agent version 0.1.9 is below this control plane's minimum 0.2.0 (grpc.min_agent_version): upgrade the agent on this node",
    );
  });

  it('a version that is not a semver is not svc-agent and passes the floor', () => {
    for (const v of ['py-1.0', 'sim', '1']) expect(isBelowMinimum(v, '9.0.0')).toBe(false);
  });
});

describe('semver order (the upgrade offer and the floor share it)', () => {
  it('major, minor, patch; a pre-release before its release; pre-releases by identifiers, numbers as numbers; build metadata ignored', () => {
    const ordered = ['0.1.9', '0.2.0-rc.1', '0.2.0-rc.2', '0.2.0-rc.10', '0.2.0-test', '0.2.0', '0.2.1-test.1', '0.2.1', '0.10.0', '1.0.0'];
    for (let i = 0; i < ordered.length - 1; i++) {
      const [a, b] = [ordered[i] as string, ordered[i + 1] as string];
      expect(compareAgentVersions(a, b), `${a} < ${b}`).toBeLessThan(0);
      expect(compareAgentVersions(b, a), `${b} > ${a}`).toBeGreaterThan(0);
    }
    expect(compareAgentVersions('0.2.0+build.5', '0.2.0')).toBe(0);
    expect(compareAgentVersions('v0.2.0', '0.2.0')).toBe(0);
    expect(compareAgentVersions('sim-1.0.0', '0.2.0')).toBe(0);
  });

  it('an upgrade is offered to an older svc-agent only: not to the release itself, a newer one, another implementation, or an agent not seen yet', () => {
    const offered = ['0.1.0', '0.2.0-rc.1', '0.2.0', '0.2.1', 'sim-1.0.0', null].map((v) => agentUpgradeAvailable(v, '0.2.0'));
    expect(offered).toEqual([true, true, false, false, false, false]);
  });

  it('the floor refuses a pre-release below the floor’s own pre-release too', () => {
    expect(isBelowMinimum('0.2.0-rc.1', '0.2.0-rc.2')).toBe(true);
    expect(isBelowMinimum('0.2.0-rc.2', '0.2.0-rc.2')).toBe(false);
  });
});

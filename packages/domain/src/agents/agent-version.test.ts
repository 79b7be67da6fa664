import { describe, expect, it } from 'vitest';
import { UnprocessableError } from '../errors.ts';
import { agentVersionStanding, assertAgentVersionServed, isOutdatedAgent, supportedAgentVersions } from './agent-version.ts';

describe('agent version standing (docs/agent.md, "Versions")', () => {
  it('against 0.2.0: 0.2.x is current, 0.1.x previous, 0.0.x too old, later minors and majors newer', () => {
    const at = (v: string) => agentVersionStanding(v, '0.2.0');
    expect([at('0.2.0'), at('0.2.7'), at('0.2.1-rc.1')]).toEqual(['current', 'current', 'current']);
    expect([at('0.1.0'), at('0.1.12')]).toEqual(['previous', 'previous']);
    expect([at('0.0.9')]).toEqual(['too-old']);
    expect([at('0.3.0'), at('1.0.0')]).toEqual(['newer', 'newer']);
  });

  it('at a major’s first minor, every minor of the major before is the previous one', () => {
    const at = (v: string) => agentVersionStanding(v, '2.0.0');
    expect([at('2.0.4'), at('1.9.0'), at('1.0.0'), at('0.9.0')]).toEqual(['current', 'previous', 'previous', 'too-old']);
    expect(supportedAgentVersions('2.0.0')).toBe('2.0.x and 1.x');
    expect(supportedAgentVersions('1.4.2')).toBe('1.4.x and 1.3.x');
  });

  it('a version that is not a svc-agent release (another implementation of the contract) is served', () => {
    for (const v of ['', 'py-1.0', 'sim-1.0.0', '1', '0.1', 'x0.0.1']) expect(agentVersionStanding(v, '0.2.0')).toBe('other');
    expect(agentVersionStanding('v0.1.4', '0.2.0')).toBe('previous');
  });

  it('only a too-old agent is refused, as unprocessable (FAILED_PRECONDITION on the wire), saying what is served', () => {
    expect(() => assertAgentVersionServed('0.1.0', '0.2.0')).not.toThrow();
    expect(() => assertAgentVersionServed('py-1.0', '0.2.0')).not.toThrow();
    expect(() => assertAgentVersionServed('0.0.9', '0.2.0')).toThrow(UnprocessableError);
    expect(() => assertAgentVersionServed('0.0.9', '0.2.0')).toThrow(
      'svc-agent 0.0.9 is too old for this control plane (agents 0.2.x and 0.1.x are served): upgrade the agent on this node',
    );
  });

  it('the node view flags an agent of an older minor (to upgrade before the next release), not a current, newer or unknown one', () => {
    const flagged = ['0.1.0', '0.0.3', null, '0.2.5', '0.3.0', 'py-1.0'].map((v) => isOutdatedAgent(v, '0.2.0'));
    expect(flagged).toEqual([true, true, false, false, false, false]);
  });
});

import { describe, expect, it } from 'vitest';
import { parseAgentCommand } from '../../src/args.ts';
import { stateDirFrom } from '../../src/state-files.ts';

describe('svc-agent command line', () => {
  it('an enrollment token that starts with "-" (base64url: one token in 64) is the token, as the panel printed it', () => {
    const cmd = parseAgentCommand(['enroll', '--server', 'cp.example:8443', '--token', '-Ab_9', '--ca-sha256', 'ab12']);
    expect(cmd).toEqual({ name: 'enroll', server: 'cp.example:8443', token: '-Ab_9', caSha256: 'ab12', force: false });
    expect(parseAgentCommand(['enroll', '--token=-x', '--server', 's:1', '--ca-sha256', 'h', '--force'])).toMatchObject({
      token: '-x',
      force: true,
    });
  });

  it('a missing value is still refused, not taken from the next option', () => {
    expect(() => parseAgentCommand(['enroll', '--server', 's:1', '--token', '--ca-sha256', 'h'])).toThrow(/--token/);
  });
});

describe('the state directory enroll and run share', () => {
  it('without --state-dir or SVC_AGENT_STATE_DIR: /var/lib/svc-agent as root, the user’s own state dir otherwise', () => {
    expect(stateDirFrom(undefined, {}, 0)).toBe('/var/lib/svc-agent');
    expect(stateDirFrom(undefined, { HOME: '/home/ann' }, 1000)).toBe('/home/ann/.local/state/svc-agent');
    expect(stateDirFrom(undefined, { HOME: '/home/ann', XDG_STATE_HOME: '/srv/state' }, 1000)).toBe('/srv/state/svc-agent');
    // A relative XDG_STATE_HOME is invalid by the XDG rules and ignored.
    expect(stateDirFrom(undefined, { HOME: '/home/ann', XDG_STATE_HOME: 'rel' }, 1000)).toBe('/home/ann/.local/state/svc-agent');
  });

  it('the flag wins over the variable, the variable over the default; both commands resolve the same way', () => {
    const env = { SVC_AGENT_STATE_DIR: '/opt/agent', HOME: '/home/ann' };
    expect(stateDirFrom('/tmp/x', env, 1000)).toBe('/tmp/x');
    expect(stateDirFrom(undefined, env, 1000)).toBe('/opt/agent');
    const enroll = parseAgentCommand(['enroll', '--server', 's:1', '--token', 't', '--ca-sha256', 'h']);
    const run = parseAgentCommand(['run']);
    expect(stateDirFrom('stateDir' in enroll ? enroll.stateDir : undefined, { HOME: '/h' }, 1000)).toBe(
      stateDirFrom('stateDir' in run ? run.stateDir : undefined, { HOME: '/h' }, 1000),
    );
  });
});

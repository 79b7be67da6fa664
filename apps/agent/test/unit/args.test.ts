import { describe, expect, it } from 'vitest';
import { parseAgentCommand } from '../../src/args.ts';

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

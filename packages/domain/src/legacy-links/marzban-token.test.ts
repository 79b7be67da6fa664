import { createHash, createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MARZBAN_TOKEN_MAX, marzbanCompactToken, marzbanTokenHonoured, readMarzbanToken } from './marzban-token.ts';

// Marzban's two token forms, minted here independently of the reader from the algorithm as the
// source describes it (shared/notes/import-sources.md, section 1), then read back.
const SECRET = randomBytes(32).toString('hex');

/** Marzban's compact token, step by step: base64url payload without padding, then 10 characters of SHA-256(payload + secret). */
function mintCompact(username: string, seconds: number, secret = SECRET): string {
  const payload = Buffer.from(`${username},${seconds}`).toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  const digest = createHash('sha256').update(`${payload}${secret}`).digest('base64').replace(/\+/g, '-').replace(/\//g, '_');
  return payload + digest.slice(0, 10);
}

/** A pre-0.5.0 token: HS256 JWT {sub, access: subscription, iat} with the same secret. */
function mintJwt(claims: Record<string, unknown>, secret = SECRET): string {
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const signature = createHmac('sha256', secret).update(`${header}.${body}`).digest('base64url');
  return `${header}.${body}.${signature}`;
}

describe('Marzban subscription tokens', () => {
  it('reads a compact token minted by the algorithm (and mints the same token itself)', () => {
    for (const [username, at] of [
      ['alice', 1_700_000_000],
      ['bob.smith@example', 1_600_000_001],
      ['x_y-z', 1_650_000_002],
    ] as const) {
      const token = mintCompact(username, at);
      expect(readMarzbanToken(token, SECRET)).toEqual({ username, issuedAt: at });
      expect(marzbanCompactToken(SECRET, username, at)).toBe(token);
    }
  });

  it('reads a legacy JWT token with access subscription; refuses another access or a missing sub', () => {
    expect(readMarzbanToken(mintJwt({ sub: 'carol', access: 'subscription', iat: 1_500_000_000 }), SECRET)).toEqual({
      username: 'carol',
      issuedAt: 1_500_000_000,
    });
    expect(readMarzbanToken(mintJwt({ sub: 'carol', access: 'sudo', iat: 1_500_000_000 }), SECRET)).toBeNull();
    expect(readMarzbanToken(mintJwt({ access: 'subscription', iat: 1_500_000_000 }), SECRET)).toBeNull();
  });

  it('refuses a token of another secret, a changed character, a cut token, padding, and junk', () => {
    const token = mintCompact('alice', 1_700_000_000);
    expect(readMarzbanToken(token, randomBytes(32).toString('hex'))).toBeNull();
    expect(readMarzbanToken(mintJwt({ sub: 'alice', access: 'subscription', iat: 1 }, 'other'), SECRET)).toBeNull();
    const flipped = `${token.slice(0, 3)}${token[3] === 'A' ? 'B' : 'A'}${token.slice(4)}`;
    expect(readMarzbanToken(flipped, SECRET)).toBeNull();
    expect(readMarzbanToken(token.slice(0, -1), SECRET)).toBeNull();
    expect(readMarzbanToken(`${token}=`, SECRET)).toBeNull();
    for (const junk of ['', 'short', 'a'.repeat(MARZBAN_TOKEN_MAX + 1), '%%%%%%%%%%%%%%%%%%%%', 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.x.y'])
      expect(readMarzbanToken(junk, SECRET), junk.slice(0, 20)).toBeNull();
    // A payload that is not "username,seconds".
    const bare = Buffer.from('no-comma-here').toString('base64url');
    const signed =
      bare +
      createHash('sha256')
        .update(bare + SECRET)
        .digest('base64url')
        .slice(0, 10);
    expect(readMarzbanToken(signed, SECRET)).toBeNull();
  });

  it('honours a token minted after the user was created, not before a revocation, and not after the import', () => {
    const user = {
      createdAt: new Date('2025-01-01T00:00:00Z'),
      revokedAt: new Date('2025-06-01T00:00:00Z'),
      importedAt: new Date('2026-11-01T00:00:00Z'),
    };
    const at = (iso: string) => ({ username: 'alice', issuedAt: Date.parse(iso) / 1000 });
    expect(marzbanTokenHonoured(at('2025-07-01T00:00:00Z'), user)).toBe(true);
    expect(marzbanTokenHonoured(at('2025-03-01T00:00:00Z'), user)).toBe(false);
    expect(marzbanTokenHonoured(at('2024-12-31T23:59:59Z'), { ...user, revokedAt: null })).toBe(false);
    expect(marzbanTokenHonoured(at('2025-01-01T00:00:00Z'), { ...user, revokedAt: null })).toBe(true);
    expect(marzbanTokenHonoured(at('2026-11-01T00:00:01Z'), user)).toBe(false);
  });
});

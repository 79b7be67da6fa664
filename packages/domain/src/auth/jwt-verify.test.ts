import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyEdDsaJwt } from './jwt-verify.ts';

const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const other = generateKeyPairSync('ed25519');
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
const now = 1_800_000_000;

function token(header: Record<string, unknown>, payload: Record<string, unknown>, key: KeyObject = privateKey) {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${sign(null, Buffer.from(input), key).toString('base64url')}`;
}
const good = { alg: 'EdDSA', kid: 'k1', typ: 'at+jwt' };
const claims = { iss: 'svc', sub: 'adm_1', exp: now + 60 };
const keys = (kid: string) => (kid === 'k1' ? publicKey : undefined);
const opts = { issuer: 'svc', typ: 'at+jwt', nowSeconds: now };

describe('access token verification refuses everything but our own valid EdDSA tokens', () => {
  it('accepts a token signed by a known key', () => {
    expect(verifyEdDsaJwt(token(good, claims), keys, opts).payload.sub).toBe('adm_1');
  });
  it('refuses a signature by another key under a known kid', () => {
    expect(() => verifyEdDsaJwt(token(good, claims, other.privateKey), keys, opts)).toThrow(/bad signature/);
  });
  it('refuses a payload changed after signing', () => {
    const t = token(good, claims).split('.');
    const forged = `${t[0]}.${b64({ ...claims, sub: 'adm_2' })}.${t[2]}`;
    expect(() => verifyEdDsaJwt(forged, keys, opts)).toThrow(/bad signature/);
  });
  it('refuses alg none and other algorithms', () => {
    expect(() => verifyEdDsaJwt(`${b64({ ...good, alg: 'none' })}.${b64(claims)}.`, keys, opts)).toThrow(/algorithm/);
    expect(() => verifyEdDsaJwt(token({ ...good, alg: 'HS256' }, claims), keys, opts)).toThrow(/algorithm/);
  });
  it('refuses an unknown kid, a missing kid, another typ and critical headers', () => {
    expect(() => verifyEdDsaJwt(token({ ...good, kid: 'k9' }, claims), keys, opts)).toThrow(/unknown signing key/);
    expect(() => verifyEdDsaJwt(token({ alg: 'EdDSA', typ: 'at+jwt' }, claims), keys, opts)).toThrow(/unknown signing key/);
    expect(() => verifyEdDsaJwt(token({ ...good, typ: 'JWT' }, claims), keys, opts)).toThrow(/type/);
    expect(() => verifyEdDsaJwt(token({ ...good, crit: ['b64'] }, claims), keys, opts)).toThrow(/critical/);
  });
  it('refuses an expired token (exp is exclusive), a not-yet-valid one and another issuer', () => {
    expect(() => verifyEdDsaJwt(token(good, { ...claims, exp: now }), keys, opts)).toThrow(/expired/);
    expect(() => verifyEdDsaJwt(token(good, { ...claims, exp: undefined }), keys, opts)).toThrow(/expired/);
    expect(() => verifyEdDsaJwt(token(good, { ...claims, nbf: now + 5 }), keys, opts)).toThrow(/not yet valid/);
    expect(() => verifyEdDsaJwt(token(good, { ...claims, iss: 'evil' }), keys, opts)).toThrow(/issuer/);
  });
  it('refuses garbage', () => {
    for (const t of ['', 'a.b', 'a.b.c.d', '!!!.###.$$$', `${b64([1])}.${b64(claims)}.x`])
      expect(() => verifyEdDsaJwt(t, keys, opts)).toThrow();
  });
});

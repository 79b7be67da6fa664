import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { AdminRole, SubjectType } from '@svc/db';
import { SignJWT } from 'jose';
import { UnauthenticatedError } from '../errors.ts';
import { newId } from '../shared/ids.ts';
import { advisoryXactLock } from '../shared/locks.ts';
import { decryptSecret, encryptSecret } from '../shared/secrets.ts';
import { type UnitOfWorkDeps, unitOfWork } from '../shared/unit-of-work.ts';
import { JwtError, type VerifiedJwt, verifyEdDsaJwt } from './jwt-verify.ts';

export type Scope = 'admin' | 'client';
export const scopeOf = (subject: SubjectType): Scope => subject;

export interface AccessClaims {
  sub: string;
  scope: Scope;
  role?: AdminRole | undefined;
  /** Session id: logout revokes this session. */
  sid: string;
  /** Admins: the token generation (admins.token_generation) the token was signed in; absent is 0. */
  gen?: number | undefined;
  /** The API token the request came with (api-tokens.ts): audit entries name it. */
  tokenId?: string | undefined;
  exp: number;
}

export interface TokenService {
  signAccess(claims: Omit<AccessClaims, 'exp'>): Promise<{ token: string; expiresIn: number }>;
  /** Verifies signature, expiry and scope; anything else is UnauthenticatedError. */
  verifyAccess(token: string, scope: Scope): Promise<AccessClaims>;
}

const ALG = 'EdDSA';
const ISSUER = 'svc';

/**
 * Access tokens: EdDSA (Ed25519) JWTs. Asymmetric so a surface that only verifies needs no
 * secret; the private key is kept in signing_keys encrypted with the installation key, so
 * every replica signs with the same key. Verification keys are cached by kid and reloaded
 * on an unknown kid (another replica rotated).
 */
export async function createTokenService(
  opts: UnitOfWorkDeps & {
    installationKey: Buffer;
    accessTtlSeconds: number;
  },
): Promise<TokenService> {
  const { db, installationKey, clock } = opts;
  const publicKeys = new Map<string, KeyObject>();

  let loadedAt = 0;
  async function loadPublicKeys() {
    loadedAt = Date.now();
    const rows = await db.selectFrom('signing_keys').select(['kid', 'public_jwk']).where('retired_at', 'is', null).execute();
    for (const r of rows) publicKeys.set(r.kid, createPublicKey({ key: r.public_jwk as never, format: 'jwk' }));
  }

  const active = await ensureSigningKey(opts, installationKey);
  await loadPublicKeys();

  return {
    async signAccess(claims) {
      const now = Math.floor(clock.now().getTime() / 1000);
      const token = await new SignJWT({
        scope: claims.scope,
        sid: claims.sid,
        ...(claims.role ? { role: claims.role } : {}),
        ...(claims.gen ? { gen: claims.gen } : {}),
      })
        .setProtectedHeader({ alg: ALG, kid: active.kid, typ: 'at+jwt' })
        .setIssuer(ISSUER)
        .setSubject(claims.sub)
        .setIssuedAt(now)
        .setExpirationTime(now + opts.accessTtlSeconds)
        .sign(active.privateKey);
      return { token, expiresIn: opts.accessTtlSeconds };
    },
    async verifyAccess(token, scope) {
      const nowSeconds = Math.floor(clock.now().getTime() / 1000);
      const opts = { issuer: ISSUER, typ: 'at+jwt', nowSeconds };
      let verified: VerifiedJwt;
      try {
        verified = verifyEdDsaJwt(token, (kid) => publicKeys.get(kid), opts);
      } catch (err) {
        if (!(err instanceof JwtError)) throw new UnauthenticatedError('invalid access token');
        if (err.message === 'unknown signing key' && Date.now() - loadedAt > 10_000) {
          // Another replica may have rotated: reload (at most every 10 s, so forged kids cannot
          // turn into a query per request), then decide.
          await loadPublicKeys();
          try {
            verified = verifyEdDsaJwt(token, (kid) => publicKeys.get(kid), opts);
          } catch (again) {
            throw new UnauthenticatedError(again instanceof JwtError && again.expired ? 'access token expired' : 'invalid access token');
          }
        } else {
          throw new UnauthenticatedError(err.expired ? 'access token expired' : 'invalid access token');
        }
      }
      const payload = verified.payload;
      if (payload.scope !== scope) throw new UnauthenticatedError(`this route needs a token of scope ${scope}`);
      if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string' || typeof payload.exp !== 'number') {
        throw new UnauthenticatedError('malformed access token');
      }
      const gen = payload.gen ?? 0;
      if (typeof gen !== 'number' || !Number.isSafeInteger(gen)) throw new UnauthenticatedError('malformed access token');
      return { sub: payload.sub, scope, sid: payload.sid, exp: payload.exp, role: payload.role as AdminRole | undefined, gen };
    },
  };
}

async function ensureSigningKey(deps: UnitOfWorkDeps, installationKey: Buffer): Promise<{ kid: string; privateKey: KeyObject }> {
  const { clock } = deps;
  const row = await unitOfWork(deps, async ({ db: trx }) => {
    const found = await trx
      .selectFrom('signing_keys')
      .selectAll()
      .where('retired_at', 'is', null)
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
    if (found) return found;
    // Two replicas starting at once on an empty database must agree on one key.
    await advisoryXactLock(trx, 'svc.signing_keys');
    const again = await trx.selectFrom('signing_keys').selectAll().where('retired_at', 'is', null).executeTakeFirst();
    if (again) return again;
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const values = {
      kid: newId('key', clock.now().getTime()),
      alg: ALG,
      public_jwk: JSON.stringify(publicKey.export({ format: 'jwk' })),
      private_key_enc: encryptSecret(installationKey, privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()),
      created_at: clock.now(),
    };
    return trx.insertInto('signing_keys').values(values).returningAll().executeTakeFirstOrThrow();
  });
  return { kid: row.kid, privateKey: createPrivateKey(decryptSecret(installationKey, row.private_key_enc)) };
}

import { createHash } from 'node:crypto';
import {
  type AdminView,
  authorize,
  type DomainDeps,
  loginAdminWithPassword,
  PasswordLoginInput,
  parseInput,
  RefreshInput,
  refreshSession,
  revokeSession,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusal } from '../support.ts';
import { withRateLimits } from './with-rate-limits.ts';

let bed: DomainTestbed;
let deps: DomainDeps;
beforeAll(async () => {
  bed = await createDomainTestbed();
  // Many sign-ins of one admin here: the limits are rate-limits.test.ts's.
  const relaxed = { limit: 1000, window_seconds: 60 };
  deps = withRateLimits(bed.deps, { login: { per_ip: relaxed, per_subject: relaxed } });
});
afterAll(() => bed.close());

const PASSWORD = 'admin-password-1';
const anAdmin = () => fixtures(bed.ctx()).admin({ role: 'owner' });
const signIn = (email: string, password = PASSWORD, ip = '192.0.2.20') =>
  loginAdminWithPassword(deps, parseInput(PasswordLoginInput, { email, password }), { ip });
const refresh = (token: string) => refreshSession(deps, 'admin', parseInput(RefreshInput, { refresh_token: token }), {});
const jwtPart = (token: string, i: 0 | 1) => JSON.parse(Buffer.from(token.split('.')[i] as string, 'base64url').toString());
const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');
const auditOf = (action: string, entityId: string) =>
  bed.deps.db.selectFrom('audit_log').selectAll().where('action', '=', action).where('entity_id', '=', entityId).execute();

describe('admin sign-in and sessions (spec 5.2-5.4, 3.2)', () => {
  let admin: AdminView;
  beforeAll(async () => {
    admin = await anAdmin();
  });

  it('a password sign-in issues an EdDSA access token for 15 minutes (sub, scope admin, role, session) and a 32-byte refresh token', async () => {
    const pair = await signIn(admin.email);
    expect(pair).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    expect(Buffer.from(pair.refresh_token, 'base64url')).toHaveLength(32);
    const claims = jwtPart(pair.access_token, 1);
    expect(claims).toMatchObject({ sub: admin.id, scope: 'admin', role: 'owner', sid: expect.stringMatching(/^ses_/) });
    expect(claims.exp - claims.iat).toBe(15 * 60);
    expect(jwtPart(pair.access_token, 0).alg).toBe('EdDSA');
  });

  it('an access token is refused once its 15 minutes are over; it only expires', async () => {
    const pair = await signIn(admin.email);
    const check = () =>
      authorize(bed.deps, `Bearer ${pair.access_token}`, { scope: 'admin' }, { ip: '192.0.2.21', route: () => 'GET /auth/me' });
    expect((await check()).sub).toBe(admin.id);
    bed.clock.advance(15 * 60 * 1000 + 1000);
    const late = await refusal(check());
    expect(late).toMatchObject({ type: 'unauthenticated' });
    expect(late?.message).toMatch(/expired/);
  });

  it('only the SHA-256 of a refresh token is stored', async () => {
    const pair = await signIn(admin.email);
    const stored = (token: string) =>
      bed.deps.db.selectFrom('refresh_tokens').select('token_hash').where('token_hash', '=', token).executeTakeFirst();
    expect(await stored(hashOf(pair.refresh_token))).toBeTruthy();
    expect(await stored(pair.refresh_token)).toBeUndefined();
  });

  it('a refresh rotates the pair within the same session', async () => {
    const pair = await signIn(admin.email);
    bed.clock.advance(1000);
    const next = await refresh(pair.refresh_token);
    expect(next.refresh_token).not.toBe(pair.refresh_token);
    expect(next.access_token).not.toBe(pair.access_token);
    expect(jwtPart(next.access_token, 1).sid).toBe(jwtPart(pair.access_token, 1).sid);
    expect((await refresh(next.refresh_token)).token_type).toBe('Bearer');
  });

  it('a used refresh token presented again is refused and revokes every session of that admin', async () => {
    const other = await anAdmin();
    const a = await signIn(other.email);
    const b = await signIn(other.email);
    const rotated = await refresh(a.refresh_token);
    const replay = await refusal(refresh(a.refresh_token));
    expect(replay).toMatchObject({ type: 'unauthenticated' });
    expect(replay?.message).toMatch(/already used/);
    // Every session of the subject is gone: the rotated one and the unrelated one.
    expect(await refusal(refresh(rotated.refresh_token))).toMatchObject({ type: 'unauthenticated' });
    expect(await refusal(refresh(b.refresh_token))).toMatchObject({ type: 'unauthenticated' });
    expect(await auditOf('auth.refresh_reuse_detected', other.id)).toHaveLength(1);
    // Signing in again still works.
    expect((await refresh((await signIn(other.email)).refresh_token)).token_type).toBe('Bearer');
  });

  it('concurrent use of one refresh token issues at most one new pair', async () => {
    const pair = await signIn(admin.email);
    const results = await Promise.allSettled([refresh(pair.refresh_token), refresh(pair.refresh_token), refresh(pair.refresh_token)]);
    expect(results.filter((r) => r.status === 'fulfilled').length).toBeLessThanOrEqual(1);
  });

  it('logout revokes only the current session', async () => {
    const a = await signIn(admin.email);
    const b = await signIn(admin.email);
    await revokeSession(bed.deps, { type: 'admin', id: admin.id, role: 'owner' }, jwtPart(a.access_token, 1).sid);
    expect(await refusal(refresh(a.refresh_token))).toMatchObject({ type: 'unauthenticated' });
    expect((await refresh(b.refresh_token)).token_type).toBe('Bearer');
  });

  it('a refresh token expires after 30 days', async () => {
    const pair = await signIn(admin.email);
    bed.clock.advance(30 * 24 * 3600 * 1000 + 1000);
    expect(await refusal(refresh(pair.refresh_token))).toMatchObject({ type: 'unauthenticated' });
  });

  it('an unknown refresh token is refused and the failure audited', async () => {
    expect(await refusal(refresh('A'.repeat(43)))).toMatchObject({ type: 'unauthenticated' });
    const audit = await bed.deps.db.selectFrom('audit_log').select('details').where('action', '=', 'auth.refresh_failed').execute();
    expect(audit).toContainEqual({ details: { reason: 'unknown refresh token', surface: 'admin' } });
  });

  it('a wrong password and an unknown email fail alike; both are audited as the anonymous caller, without the password', async () => {
    const wrong = await refusal(signIn(admin.email, 'wrong-password', '192.0.2.30'));
    const unknown = await refusal(signIn('nobody@example.com', 'wrong-password', '192.0.2.30'));
    expect(wrong).toMatchObject({ type: 'unauthenticated' });
    expect(unknown?.message).toBe(wrong?.message);
    const rows = await bed.deps.db.selectFrom('audit_log').selectAll().where('action', '=', 'auth.login_failed').execute();
    expect(rows.find((r) => r.entity_id === admin.id)).toMatchObject({
      actor_type: 'anonymous',
      entity_type: 'admin',
      ip: '192.0.2.30',
      details: { reason: 'wrong_password', email: admin.email },
    });
    expect(rows.map((r) => (r.details as { reason: string }).reason)).toContain('unknown_email');
    expect(JSON.stringify(rows)).not.toContain('wrong-password');
  });

  it('passwords are stored as Argon2id with at least m=19 MiB, t=2, p=1', async () => {
    const row = await bed.deps.db.selectFrom('admins').select('password_hash').where('id', '=', admin.id).executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });
});

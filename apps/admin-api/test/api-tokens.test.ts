import { randomBytes } from 'node:crypto';
import { TOPICS } from '@svc/domain';
import { adminWithRole, setupOwner, type TestServer, testDatabaseUrl } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// Issue 35.1 over real HTTP: a named API token acts with its scopes intersected with its
// creator's role as it is now; expired, revoked, out-of-range-address tokens are refused; a
// token cannot mint tokens or act as a session; audit entries name the token; last use is kept.
const relaxed = { rate_limits: { login: { per_subject: { limit: 1000, window_seconds: 60 } } } };
let s: TestServer;
let owner: string;
beforeAll(async () => {
  s = await startAdminApi({ config: relaxed });
  owner = (await setupOwner(s)).access_token;
});
afterAll(() => s?.stop());

interface Created {
  id: string;
  token: string;
  prefix: string;
}
const mint = async (body: Record<string, unknown>, bearer = owner): Promise<Created> => {
  const res = await s.api.post('/api/v1/api-tokens', { name: `t-${randomBytes(4).toString('hex')}`, ...body }, { token: bearer });
  expect(res.status, res.text).toBe(201);
  return res.body as Created;
};
const newNode = (token: string) =>
  s.api.post('/api/v1/nodes', { name: `n-${randomBytes(4).toString('hex')}`, address: 'n.example.net' }, { token });

describe('API tokens', () => {
  it('the secret is shown once and only its hash is kept; the list never shows it', async () => {
    const t = await mint({ scopes: ['nodes:read'] });
    expect(t.token).toMatch(/^svc_pat_[A-Za-z0-9_-]{43}$/);
    expect(t.token.startsWith(t.prefix)).toBe(true);
    const list = await s.api.get('/api/v1/api-tokens', { token: owner });
    expect(list.text).not.toContain(t.token);
    const row = await s.deps.db.selectFrom('api_tokens').selectAll().where('id', '=', t.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(t.token);
  });

  it('a read scope reads its family and nothing else; it cannot write (403)', async () => {
    const t = await mint({ scopes: ['nodes:read'] });
    expect((await s.api.get('/api/v1/nodes', { token: t.token })).status).toBe(200);
    expect((await newNode(t.token)).status).toBe(403);
    expect((await s.api.get('/api/v1/clients', { token: t.token })).status).toBe(403);
  });

  it('a write scope writes its family, and the audit entry names the token; last use is recorded', async () => {
    const t = await mint({ scopes: ['nodes:write'] });
    const made = await newNode(t.token);
    expect(made.status).toBe(201);
    const entry = await s.deps.db
      .selectFrom('audit_log')
      .select(['actor_type', 'via_token_id'])
      .where('action', '=', 'node.created')
      .where('entity_id', '=', made.body.id)
      .executeTakeFirstOrThrow();
    expect(entry).toEqual({ actor_type: 'admin', via_token_id: t.id });
    await expect
      .poll(
        async () =>
          (await s.deps.db.selectFrom('api_tokens').select('last_used_ip').where('id', '=', t.id).executeTakeFirstOrThrow()).last_used_ip,
      )
      .toBe('127.0.0.1');
  });

  it('a token cannot mint tokens, list them, or act as a session (/auth/me)', async () => {
    const t = await mint({ scopes: ['role'] });
    expect((await s.api.post('/api/v1/api-tokens', { name: 'child', scopes: ['role'] }, { token: t.token })).status).toBe(403);
    expect((await s.api.get('/api/v1/api-tokens', { token: t.token })).status).toBe(403);
    expect((await s.api.get('/api/v1/auth/me', { token: t.token })).status).toBe(403);
  });

  it('an expired token is refused (401)', async () => {
    const t = await mint({ scopes: ['role'], expires_at: new Date(s.clock.now().getTime() + 60_000).toISOString() });
    expect((await s.api.get('/api/v1/nodes', { token: t.token })).status).toBe(200);
    s.clock.advance(61_000);
    const res = await s.api.get('/api/v1/nodes', { token: t.token });
    expect(res.status).toBe(401);
    expect(res.body.detail).toMatch(/expired/);
  });

  it('a revoked token is refused at once (401)', async () => {
    const t = await mint({ scopes: ['role'] });
    expect((await s.api.get('/api/v1/nodes', { token: t.token })).status).toBe(200);
    expect((await s.api.delete(`/api/v1/api-tokens/${t.id}`, { token: owner })).status).toBe(204);
    expect((await s.api.get('/api/v1/nodes', { token: t.token })).status).toBe(401);
  });

  it('an address outside its allow-list is refused (401); inside, it passes', async () => {
    const elsewhere = await mint({ scopes: ['role'], allowed_ips: ['10.0.0.0/8', '2001:db8::/32'] });
    expect((await s.api.get('/api/v1/nodes', { token: elsewhere.token })).status).toBe(401);
    const here = await mint({ scopes: ['role'], allowed_ips: ['127.0.0.1'] });
    expect((await s.api.get('/api/v1/nodes', { token: here.token })).status).toBe(200);
  });

  it("acts with its creator's role as it is now: a demoted creator's token shrinks, a deleted creator's dies", async () => {
    const admin = await adminWithRole(s, owner, 'admin', `a-${randomBytes(3).toString('hex')}@example.com`);
    const t = await mint({ scopes: ['role'] }, admin.access_token);
    expect((await newNode(t.token)).status).toBe(201);
    expect((await s.api.patch(`/api/v1/admins/${admin.admin.id}`, { role: 'viewer' }, { token: owner })).status).toBe(200);
    expect((await newNode(t.token)).status).toBe(403);
    expect((await s.api.get('/api/v1/nodes', { token: t.token })).status).toBe(200);
    expect((await s.api.delete(`/api/v1/admins/${admin.admin.id}`, { token: owner })).status).toBe(204);
    expect((await s.api.get('/api/v1/nodes', { token: t.token })).status).toBe(401);
  });

  it('refuses bad scopes, a past expiry and a bad allow-list (400), changing nothing', async () => {
    const before = (await s.deps.db.selectFrom('api_tokens').select('id').execute()).length;
    for (const body of [
      { name: 'x', scopes: ['nodes:delete'] },
      { name: 'x', scopes: ['unknown:read'] },
      { name: 'x', scopes: [] },
      { name: 'x', scopes: ['role'], expires_at: '2000-01-01T00:00:00Z' },
      { name: 'x', scopes: ['role'], allowed_ips: ['not-an-address'] },
    ])
      expect((await s.api.post('/api/v1/api-tokens', body, { token: owner })).status, JSON.stringify(body)).toBe(400);
    expect((await s.deps.db.selectFrom('api_tokens').select('id').execute()).length).toBe(before);
  });
});

describe('rate limit per token', () => {
  it('past rate_limits.api_token a token is answered 429 with Retry-After; another token of the same admin is not slowed', async () => {
    const limited = await startAdminApi({
      config: { ...relaxed, rate_limits: { ...relaxed.rate_limits, api_token: { limit: 3, window_seconds: 60 } } },
    });
    try {
      const boss = (await setupOwner(limited)).access_token;
      const make = async () =>
        (
          (await limited.api.post('/api/v1/api-tokens', { name: `r-${randomBytes(3).toString('hex')}`, scopes: ['role'] }, { token: boss }))
            .body as Created
        ).token;
      const [a, b] = [await make(), await make()];
      for (let i = 0; i < 3; i++) expect((await limited.api.get('/api/v1/nodes', { token: a })).status).toBe(200);
      const refused = await limited.api.get('/api/v1/nodes', { token: a });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await limited.api.get('/api/v1/nodes', { token: b })).status).toBe(200);
      // The admin's own session is not an API token: not counted.
      expect((await limited.api.get('/api/v1/nodes', { token: boss })).status).toBe(200);
    } finally {
      await limited.stop();
    }
  });
});

describe.skipIf(!testDatabaseUrl() || !process.env.REDIS_URL)('split mode: revocation holds across two replicas over Redis', () => {
  let one: TestServer;
  let two: TestServer;
  let boss: string;
  beforeAll(async () => {
    const installationKey = randomBytes(32).toString('base64');
    const redisKeyPrefix = `svc-test:${randomBytes(6).toString('hex')}:`;
    one = await startAdminApi({ config: relaxed, installationKey, redisKeyPrefix });
    boss = (await setupOwner(one)).access_token;
    two = await startAdminApi({ config: relaxed, installationKey, redisKeyPrefix, database: one.database });
  });
  afterAll(async () => {
    await two?.stop({ keepDatabase: true });
    await one?.stop();
  });

  it('revoked through replica one: the next request to replica two is 401', async () => {
    const res = await one.api.post('/api/v1/api-tokens', { name: 'bot', scopes: ['role'] }, { token: boss });
    const t = res.body as Created;
    expect((await two.api.get('/api/v1/nodes', { token: t.token })).status).toBe(200); // replica two holds the grant
    let heard!: () => void;
    const done = new Promise<void>((r) => {
      heard = r;
    });
    const off = await two.deps.bus.subscribe(TOPICS.apiTokensChanged, () => heard());
    expect((await one.api.delete(`/api/v1/api-tokens/${t.id}`, { token: boss })).status).toBe(204);
    await done;
    await off();
    expect((await two.api.get('/api/v1/nodes', { token: t.token })).status).toBe(401);
  });
});

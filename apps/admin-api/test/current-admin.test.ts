import { randomBytes } from 'node:crypto';
import { ADMIN_ACCESS_MAX_AGE_MS, TOPICS } from '@svc/domain';
import { adminWithRole, login, setupOwner, type TestServer, testDatabaseUrl } from '@svc/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// Issue 12.7: access tokens stay unrevocable JWTs (spec 5.3), but each request is authorized
// against the admin as they are now.
const relaxed = { rate_limits: { login: { per_subject: { limit: 1000, window_seconds: 60 } } } };
const newNode = (s: TestServer, token: string) =>
  s.api.post('/api/v1/nodes', { name: `n-${randomBytes(4).toString('hex')}`, address: '203.0.113.10' }, { token });

describe('each request is authorized against the admin as they are now (issue 12.7)', () => {
  let s: TestServer;
  let owner: string;
  beforeAll(async () => {
    s = await startAdminApi({ config: relaxed });
    owner = (await setupOwner(s)).access_token;
  });
  afterAll(() => s.stop());

  it("a deleted admin's access token is 401 on writes and reads alike", async () => {
    const a = await adminWithRole(s, owner, 'admin');
    expect((await newNode(s, a.access_token)).status).toBe(201);
    expect((await s.api.delete(`/api/v1/admins/${a.admin.id}`, { token: owner })).status).toBe(204);
    const write = await newNode(s, a.access_token);
    expect(write.status).toBe(401);
    expect(write.body.detail).toContain('no longer exists');
    expect((await s.api.get('/api/v1/nodes', { token: a.access_token })).status).toBe(401);
    expect((await s.api.get('/api/v1/auth/me', { token: a.access_token })).status).toBe(401);
  });

  it("a demoted admin's token has the new role's rights (a viewer cannot write); the role comes from the record, not the token", async () => {
    const a = await adminWithRole(s, owner, 'admin');
    expect((await newNode(s, a.access_token)).status).toBe(201);
    expect((await s.api.patch(`/api/v1/admins/${a.admin.id}`, { role: 'viewer' }, { token: owner })).status).toBe(200);
    expect((await newNode(s, a.access_token)).status).toBe(403);
    expect((await s.api.get('/api/v1/nodes', { token: a.access_token })).status).toBe(200);
    // Promoted back: the same token writes again.
    expect((await s.api.patch(`/api/v1/admins/${a.admin.id}`, { role: 'admin' }, { token: owner })).status).toBe(200);
    expect((await newNode(s, a.access_token)).status).toBe(201);
  });

  it('a demoted owner cannot use an owner-only route with the token signed as owner', async () => {
    const o2 = await adminWithRole(s, owner, 'owner');
    expect((await s.api.patch(`/api/v1/admins/${o2.admin.id}`, { role: 'admin' }, { token: owner })).status).toBe(200);
    const create = await s.api.post(
      '/api/v1/admins',
      { email: 'x@example.com', password: 'long-enough-1', role: 'owner' },
      { token: o2.access_token },
    );
    expect(create.status).toBe(403);
  });

  it('a password change ends the access tokens signed before it; tokens signed after it work', async () => {
    const a = await adminWithRole(s, owner, 'admin');
    const patched = await s.api.patch(`/api/v1/admins/${a.admin.id}`, { password: 'a-new-password-2' }, { token: owner });
    expect(patched.status).toBe(200);
    const old = await newNode(s, a.access_token);
    expect(old.status).toBe(401);
    expect(old.body.detail).toContain('password changed');
    const fresh = await login(s, a.email, 'a-new-password-2');
    expect((await newNode(s, fresh.access_token)).status).toBe(201);
    // Removing the password (OAuth only) ends them too.
    expect((await s.api.patch(`/api/v1/admins/${a.admin.id}`, { password: null }, { token: owner })).status).toBe(200);
    expect((await s.api.get('/api/v1/auth/me', { token: fresh.access_token })).status).toBe(401);
  });

  it(`a change that reaches no process through the bus is seen within ${ADMIN_ACCESS_MAX_AGE_MS / 1000} s (the cache's age limit)`, async () => {
    const a = await adminWithRole(s, owner, 'admin');
    expect((await newNode(s, a.access_token)).status).toBe(201); // cached as admin
    // As a change made where no bus reaches (a shell without Redis): the row alone.
    await s.deps.db.updateTable('admins').set({ role: 'viewer' }).where('id', '=', a.admin.id).execute();
    s.clock.advance(ADMIN_ACCESS_MAX_AGE_MS + 1);
    expect((await newNode(s, a.access_token)).status).toBe(403);
  });
});

// Split mode: two admin-api processes' worth of runtime over one PostgreSQL database and one
// Redis; a change made through one reaches the other's cache over Redis pub/sub.
describe.skipIf(!testDatabaseUrl() || !process.env.REDIS_URL)('split mode: two admin-api instances (issue 12.7)', () => {
  let one: TestServer;
  let two: TestServer;
  let owner: string;
  beforeAll(async () => {
    const installationKey = randomBytes(32).toString('base64');
    const redisKeyPrefix = `svc-test:${randomBytes(6).toString('hex')}:`;
    one = await startAdminApi({ config: relaxed, installationKey, redisKeyPrefix });
    owner = (await setupOwner(one)).access_token;
    two = await startAdminApi({ config: relaxed, installationKey, redisKeyPrefix, database: one.database });
  });
  afterAll(async () => {
    await two?.stop({ keepDatabase: true });
    await one?.stop();
  });
  let received: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const unsubscribe of received) await unsubscribe();
    received = [];
  });

  /** `heard` resolves when instance two has heard `admins.changed` (its cache heard it first: subscribed earlier). */
  const listenOnTwo = async (): Promise<{ heard: Promise<void> }> => {
    let done!: () => void;
    const heard = new Promise<void>((resolve) => {
      done = resolve;
    });
    received.push(await two.deps.bus.subscribe(TOPICS.adminsChanged, () => done()));
    return { heard };
  };

  it('delete through instance one: the next request to instance two is 401', async () => {
    const a = await adminWithRole(one, owner, 'admin');
    expect((await newNode(two, a.access_token)).status).toBe(201); // instance two holds the admin
    const { heard } = await listenOnTwo();
    expect((await one.api.delete(`/api/v1/admins/${a.admin.id}`, { token: owner })).status).toBe(204);
    await heard;
    expect((await newNode(two, a.access_token)).status).toBe(401);
  });

  it('demote through instance one: the next request to instance two has the viewer rights', async () => {
    const a = await adminWithRole(one, owner, 'admin');
    expect((await newNode(two, a.access_token)).status).toBe(201);
    const { heard } = await listenOnTwo();
    expect((await one.api.patch(`/api/v1/admins/${a.admin.id}`, { role: 'viewer' }, { token: owner })).status).toBe(200);
    await heard;
    expect((await newNode(two, a.access_token)).status).toBe(403);
    expect((await two.api.get('/api/v1/nodes', { token: a.access_token })).status).toBe(200);
  });
});

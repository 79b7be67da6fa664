import { createTestDatabase, type TestServer } from '@svc/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// The setup rules (hash only, single use, wrong token audited, a new token each start) are
// proven on the use cases: packages/domain-tests/test/auth/setup.test.ts.
const servers: TestServer[] = [];
const boot = async (...args: Parameters<typeof startAdminApi>) => {
  const s = await startAdminApi(...args);
  servers.push(s);
  return s;
};
afterEach(async () => {
  while (servers.length) await servers.pop()?.stop();
});

const owner = { email: 'Owner@Example.com', password: 'owner-password-1' };

describe('bootstrap mode (spec 3.4, 5.5)', () => {
  it('with no admin, start writes a one-time setup token to the process log as a setup_token line', async () => {
    const s = await boot();
    expect(s.setupToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const line = s.logs.find((l) => typeof l.msg === 'string' && l.msg.includes('setup_token'));
    expect(line?.setup_token).toBe(s.setupToken);
    expect(line?.msg).toContain(s.setupToken);
    const methods = await s.api.get('/api/v1/auth/methods');
    expect(methods.status).toBe(200);
    expect(methods.body).toEqual({ password: true, oauth: [], setup_required: true });
  });

  it('POST /setup with the token is 201 with the owner; afterwards it is 404 problem+json, whatever the body', async () => {
    const s = await boot();
    const res = await s.api.post('/api/v1/setup', { token: s.setupToken, ...owner });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ email: 'owner@example.com', role: 'owner', has_password: true });

    const again = await s.api.post('/api/v1/setup', { token: s.setupToken, email: 'x@example.com', password: 'another-pass-1' });
    expect(again.status).toBe(404);
    expect(again.headers.get('content-type')).toBe('application/problem+json');
    // The gate runs before validation: a body that is not a setup request is 404 too.
    expect((await s.api.post('/api/v1/setup', { nonsense: true })).status).toBe(404);
    expect((await s.api.get('/api/v1/auth/methods')).body.setup_required).toBe(false);
    expect((await s.api.post('/api/v1/auth/login', { email: owner.email, password: owner.password })).status).toBe(200);
  });

  it('a wrong setup token is 401 problem+json', async () => {
    const s = await boot();
    const res = await s.api.post('/api/v1/setup', { token: 'not-the-token', ...owner });
    expect(res.status).toBe(401);
    expect(res.body.type).toBe('urn:svc:problem:unauthenticated');
  });

  it('a restart with still no admin logs a new token and the old one no longer works', async () => {
    const database = await createTestDatabase();
    const installationKey = Buffer.alloc(32, 7).toString('base64');
    const first = await startAdminApi({ database, installationKey });
    const oldToken = first.setupToken;
    await first.stop({ keepDatabase: true });
    const second = await boot({ database, installationKey });
    expect(second.setupToken).toBeTruthy();
    expect(second.setupToken).not.toBe(oldToken);
    expect((await second.api.post('/api/v1/setup', { token: oldToken, ...owner })).status).toBe(401);
    expect((await second.api.post('/api/v1/setup', { token: second.setupToken, ...owner })).status).toBe(201);
  });

  it('a restart after setup logs no token and setup stays 404', async () => {
    const database = await createTestDatabase();
    const installationKey = Buffer.alloc(32, 9).toString('base64');
    const first = await startAdminApi({ database, installationKey });
    expect((await first.api.post('/api/v1/setup', { token: first.setupToken, ...owner })).status).toBe(201);
    await first.stop({ keepDatabase: true });
    const second = await boot({ database, installationKey });
    expect(second.setupToken).toBeNull();
    expect(second.logs.some((l) => JSON.stringify(l).includes('setup_token'))).toBe(false);
    expect((await second.api.post('/api/v1/setup', { token: 'x', ...owner })).status).toBe(404);
  });

  it('a replica with another installation key refuses to start on the same database', async () => {
    const database = await createTestDatabase();
    const first = await startAdminApi({ database, installationKey: Buffer.alloc(32, 1).toString('base64') });
    await first.stop({ keepDatabase: true });
    await expect(startAdminApi({ database, installationKey: Buffer.alloc(32, 2).toString('base64') })).rejects.toThrow(/installation key/);
    await database.destroy();
  });

  it('setup validates its body with errors per field and creates nothing', async () => {
    const s = await boot();
    const res = await s.api.post('/api/v1/setup', { token: s.setupToken, email: 'not-an-email', password: 'short' });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.errors)).toContain('email');
    const weak = await s.api.post('/api/v1/setup', { token: s.setupToken, email: 'ok@example.com', password: 'short' });
    expect(weak.status).toBe(400);
    expect(weak.body.errors.password).toMatch(/at least 8/);
    expect(await s.deps.db.selectFrom('admins').select('id').execute()).toHaveLength(0);
  });
});

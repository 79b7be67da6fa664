import { login, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// What is audited, by whom, is proven on the use cases (packages/domain-tests/test/admins,
// auth, acme); here: reading the log over HTTP.
let s: TestServer;
let token: string;
let ownerId: string;
beforeAll(async () => {
  s = await startAdminApi();
  const o = await setupOwner(s);
  token = o.access_token;
  ownerId = o.admin.id;
});
afterAll(() => s.stop());

const audit = (query: string) => s.api.get(`/api/v1/audit-log?${query}`, { token });

describe('GET /audit-log (spec 5.10, 6): filterable', () => {
  it('filters by entity_type and entity_id; an item carries the action, actor, entity and time', async () => {
    const created = await s.api.post('/api/v1/admins', { email: 'x@example.com', role: 'viewer' }, { token });
    const res = await audit(`entity_type=admin&entity_id=${created.body.id}`);
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(1);
    expect(res.body.items[0]).toMatchObject({
      action: 'admin.created',
      actor_type: 'admin',
      actor_id: ownerId,
      entity_type: 'admin',
      entity_id: created.body.id,
    });
    expect(res.body.items[0].at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('filters by actor_id', async () => {
    await s.api.post('/api/v1/admins', { email: 'y@example.com', role: 'viewer' }, { token });
    const res = await audit(`actor_id=${ownerId}&limit=200`);
    expect(res.body.items.length).toBeGreaterThan(0);
    expect(res.body.items.every((i: { actor_id: string }) => i.actor_id === ownerId)).toBe(true);
  });

  it('filters by time: from inclusive, to exclusive', async () => {
    s.clock.advance(60_000);
    const t0 = s.clock.now().toISOString();
    s.clock.advance(60_000);
    await login(s, 'owner@example.com', 'owner-password-1');
    const t1 = s.clock.now().toISOString();
    s.clock.advance(60_000);
    const after = await audit(`from=${encodeURIComponent(t1)}`);
    expect(after.body.items.map((i: { action: string }) => i.action)).toEqual(['auth.login']);
    const before = await audit(`to=${encodeURIComponent(t1)}&limit=200`);
    expect(before.body.items.some((i: { action: string; at: string }) => i.action === 'auth.login' && i.at === t1)).toBe(false);
    const window = await audit(`from=${encodeURIComponent(t0)}&to=${encodeURIComponent(s.clock.now().toISOString())}`);
    expect(window.body.items).toHaveLength(1);
  });
});

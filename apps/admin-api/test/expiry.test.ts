import { setupOwner, type TestServer } from '@svc/testkit';
import { createWorker } from '@svc/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let token: string;
beforeAll(async () => {
  s = await startAdminApi();
  token = (await setupOwner(s)).access_token;
});
afterAll(() => s.stop());

async function fleetWithSubscription(expiresInMs: number) {
  const now = s.clock.now();
  const tag = Math.random().toString(36).slice(2, 8);
  const node = (await s.api.post('/api/v1/nodes', { name: `n-${tag}`, address: `${tag}.example.com` }, { token })).body;
  const other = (await s.api.post('/api/v1/nodes', { name: `o-${tag}`, address: `o${tag}.example.com` }, { token })).body;
  const profile = (
    await s.api.post(
      '/api/v1/inbound-profiles',
      {
        name: `p-${tag}`,
        protocol: 'vless',
        stream: { network: 'tcp', security: 'none' },
        sniffing: { enabled: false, dest_override: [], route_only: false },
      },
      { token },
    )
  ).body;
  const inbound = (
    await s.api.post(
      '/api/v1/inbounds',
      { node_id: node.id, profile_id: profile.id, port: 10000 + Math.floor(Math.random() * 50000) },
      { token },
    )
  ).body;
  const group = (await s.api.post('/api/v1/access-groups', { name: `g-${tag}`, inbound_ids: [inbound.id] }, { token })).body;
  const client = (await s.api.post('/api/v1/clients', { email: `c-${tag}@example.com` }, { token })).body;
  const sub = await s.api.post(
    '/api/v1/subscriptions',
    { client_id: client.id, access_group_ids: [group.id], expires_at: new Date(now.getTime() + expiresInMs).toISOString() },
    { token },
  );
  expect(sub.status, sub.text).toBe(201);
  return { node, other, sub: sub.body };
}

const revision = async (id: string) =>
  (await s.deps.db.selectFrom('nodes').select('desired_revision').where('id', '=', id).executeTakeFirstOrThrow()).desired_revision;

describe('a subscription that expires by time alone', () => {
  it('is counted as expired by the stats overview before any write', async () => {
    await fleetWithSubscription(60_000);
    const before = (await s.api.get('/api/v1/stats/overview', { token })).body.subscriptions;
    s.clock.advance(61_000);
    const after = (await s.api.get('/api/v1/stats/overview', { token })).body.subscriptions;
    expect(after.expired).toBe(before.expired + 1);
    expect(after.active).toBe(before.active - 1);
  });

  it("is written down by the worker's scheduled sweep, and only its nodes get a new revision", async () => {
    const { node, other, sub } = await fleetWithSubscription(60_000);
    const [r0, o0] = [await revision(node.id), await revision(other.id)];
    s.clock.advance(61_000);
    const { start, stop } = createWorker(s.runtime, { sweepEveryMs: 20 });
    await start();
    try {
      for (let i = 0; i < 100; i++) {
        const row = await s.deps.db.selectFrom('subscriptions').select('status').where('id', '=', sub.id).executeTakeFirstOrThrow();
        if (row.status === 'expired') break;
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      await stop();
    }
    const row = await s.deps.db.selectFrom('subscriptions').select('status').where('id', '=', sub.id).executeTakeFirstOrThrow();
    expect(row.status).toBe('expired');
    expect(await revision(node.id)).toBeGreaterThan(r0);
    expect(await revision(other.id)).toBe(o0);
    const audit = await s.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('entity_id', '=', sub.id)
      .where('action', '=', 'subscription.expired')
      .execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]?.actor_type).toBe('system');
  });
});

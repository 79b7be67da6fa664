import { createWorker } from '@svc/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Gateway, nodeRow, startGateway } from './harness.ts';

// Issue 6, limits: usage that reaches a subscription's traffic limit is written down at once
// by the worker (the usage ingest hands the check over after the report), and the node receives a
// DesiredState without that user. The sweep is scheduled far apart here, so only the
// enqueued job can do it in time.

let g: Gateway;
let stopWorker: () => Promise<void>;
beforeAll(async () => {
  g = await startGateway();
  const worker = createWorker(g.s.runtime, { sweepEveryMs: 3_600_000 });
  await worker.start();
  stopWorker = worker.stop;
});
afterAll(async () => {
  await stopWorker();
  await g.stop();
});

describe('usage reaching the traffic limit', () => {
  it('limits the subscription within moments of the UsageAck, as the system, and the node drops the user', async () => {
    const t = await g.token();
    const post = async (path: string, body: unknown) => {
      const res = await g.s.api.post(path, body, { token: t });
      expect(res.status, `${path} ${res.text}`).toBe(201);
      return res.body;
    };
    const { node, agent } = await g.enrolledAgent();
    const profile = await post('/api/v1/inbound-profiles', {
      name: 'lim-vless',
      protocol: 'vless',
      stream: { network: 'tcp', security: 'none' },
    });
    const inbound = await post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 443 });
    const group = await post('/api/v1/access-groups', { name: 'lim-g', inbound_ids: [inbound.id] });
    const client = await post('/api/v1/clients', { email: 'lim@example.com' });
    const capped = await post('/api/v1/subscriptions', {
      client_id: client.id,
      access_group_ids: [group.id],
      traffic_limit_bytes: 1_000_000,
    });
    const free = await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] });

    agent.connect();
    await agent.waitForRevision(BigInt((await nodeRow(g, node.id)).desired_revision));
    const users = () => (agent.desiredStates.at(-1)?.config?.xray?.inbounds[0]?.users ?? []).map((u) => u.email).sort();
    expect(users()).toEqual([`${capped.id}@svc`, `${free.id}@svc`].sort());

    await agent.sendUsage(1n, [
      { subscriptionId: capped.id, uplinkBytes: 400_000n, downlinkBytes: 300_000n },
      { subscriptionId: free.id, uplinkBytes: 5_000_000n, downlinkBytes: 0n },
    ]);
    const before = BigInt((await nodeRow(g, node.id)).desired_revision);
    await agent.sendUsage(2n, [{ subscriptionId: capped.id, uplinkBytes: 200_000n, downlinkBytes: 100_000n }]);

    const status = async () =>
      (await g.s.deps.db.selectFrom('subscriptions').select('status').where('id', '=', capped.id).executeTakeFirstOrThrow()).status;
    await eventually(async () => expect(await status()).toBe('limited'), 5000);
    const after = BigInt((await nodeRow(g, node.id)).desired_revision);
    expect(after).toBeGreaterThan(before);
    await agent.waitForRevision(after);
    expect(users()).toEqual([`${free.id}@svc`]);
    const audit = await g.s.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('entity_id', '=', capped.id)
      .where('action', '=', 'subscription.limited')
      .execute();
    expect(audit.map((a) => [a.actor_type, a.actor_id])).toEqual([['system', null]]);
    // The unlimited one keeps being served, whatever it used.
    expect(
      (await g.s.deps.db.selectFrom('subscriptions').select('status').where('id', '=', free.id).executeTakeFirstOrThrow()).status,
    ).toBe('active');
  });
});

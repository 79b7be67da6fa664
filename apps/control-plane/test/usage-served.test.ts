import { SERVED_GRACE_MS, subscriptionsWithCounters } from '@svc/domain';
import { usageFolded } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Gateway, nodeRow, startGateway } from './harness.ts';

// Issue 12.4 and the usage part of 12.1, through real gRPC over mTLS: a node is credited only
// for the subscriptions it serves, and an entry that can name no subscription is dropped; in
// both cases the report is acknowledged (an unacknowledged report is retried forever).

let g: Gateway;
let profileId: string;
let clientId: string;
let port = 30000;

beforeAll(async () => {
  g = await startGateway();
  const t = await g.token();
  const profile = await g.s.api.post(
    '/api/v1/inbound-profiles',
    { name: 'vless-tcp', protocol: 'vless', stream: { network: 'tcp', security: 'none' } },
    { token: t },
  );
  profileId = profile.body.id;
  clientId = (await g.s.api.post('/api/v1/clients', { email: 'served@example.com' }, { token: t })).body.id;
});
afterAll(() => g.stop());

/** An access group granting a new inbound on this node. */
async function groupOn(nodeId: string): Promise<string> {
  const t = await g.token();
  const inbound = await g.s.api.post('/api/v1/inbounds', { node_id: nodeId, profile_id: profileId, port: port++ }, { token: t });
  expect(inbound.status, inbound.text).toBe(201);
  const group = await g.s.api.post('/api/v1/access-groups', { name: `g-${port}`, inbound_ids: [inbound.body.id] }, { token: t });
  expect(group.status, group.text).toBe(201);
  return group.body.id;
}

async function subscription(body: Record<string, unknown>): Promise<string> {
  const res = await g.s.api.post('/api/v1/subscriptions', { client_id: clientId, ...body }, { token: await g.token() });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

const subscriptionRow = (id: string) => subscriptionsWithCounters(g.s.deps.db).where('id', '=', id).executeTakeFirstOrThrow();
const used = async (id: string) => Number((await subscriptionRow(id)).used_bytes);
const droppedOn = async (nodeId: string) => Number((await nodeRow(g, nodeId)).usage_entries_dropped);

describe('a node is credited only for the subscriptions it serves (issue 12.4)', () => {
  it('an enrolled node with no inbounds charging a victim gets its UsageAck; the victim used_bytes and status do not change', async () => {
    const { agent: serving, node: servingNode } = await g.enrolledAgent();
    const victim = await subscription({ access_group_ids: [await groupOn(servingNode.id)], traffic_limit_bytes: 1_000_000_000 });
    const { node: attacker, agent } = await g.enrolledAgent();
    agent.connect();
    await agent.sendUsage(1n, [{ subscriptionId: victim, uplinkBytes: 1_250_000_000n, downlinkBytes: 1_250_000_000n }]);
    await usageFolded(g.s.deps.db);
    expect(agent.acks).toEqual([1n]);
    expect(await subscriptionRow(victim)).toMatchObject({ used_bytes: 0, status: 'active' });
    expect(await droppedOn(attacker.id)).toBe(1);
    expect(Number((await nodeRow(g, attacker.id)).last_usage_report_id)).toBe(1);
    // The node that serves it is credited.
    serving.connect();
    await serving.sendUsage(1n, [{ subscriptionId: victim, uplinkBytes: 10n, downlinkBytes: 20n }]);
    await usageFolded(g.s.deps.db);
    expect(await used(victim)).toBe(30);
    expect(await droppedOn(servingNode.id)).toBe(0);
  });

  it('a subscription taken off the node (its access group removed) is credited from it for the grace, then dropped', async () => {
    const { node, agent } = await g.enrolledAgent();
    const sub = await subscription({ access_group_ids: [await groupOn(node.id)] });
    const patched = await g.s.api.patch(`/api/v1/subscriptions/${sub}`, { access_group_ids: [] }, { token: await g.token() });
    expect(patched.status, patched.text).toBe(200);
    agent.connect();
    g.s.clock.advance(SERVED_GRACE_MS - 60_000);
    await agent.sendUsage(1n, [{ subscriptionId: sub, uplinkBytes: 5n, downlinkBytes: 0n }]);
    await usageFolded(g.s.deps.db);
    expect(await used(sub)).toBe(5);
    g.s.clock.advance(2 * 60_000);
    await agent.sendUsage(2n, [{ subscriptionId: sub, uplinkBytes: 5n, downlinkBytes: 0n }]);
    await usageFolded(g.s.deps.db);
    expect(agent.acks).toEqual([1n, 2n]);
    expect(await used(sub)).toBe(5);
    expect(await droppedOn(node.id)).toBe(1);
  });
});

describe('a usage entry whose subscription id can name no subscription is dropped; the report is acknowledged (issue 12.1)', () => {
  it('NUL, a lone surrogate, empty, too long and not-an-id entries are dropped and counted, the rest credited, the report acked', async () => {
    const { node, agent } = await g.enrolledAgent();
    const sub = await subscription({ access_group_ids: [await groupOn(node.id)] });
    const bad = [`${sub}\u0000`, 'sub_\u0000', 'sub_\ud800', '', 'x'.repeat(65), 'not-a-subscription-id'];
    agent.connect();
    await eventually(async () => expect((await nodeRow(g, node.id)).connectivity).toBe('online'));
    await agent.sendUsage(1n, [
      ...bad.map((subscriptionId) => ({ subscriptionId, uplinkBytes: 1n, downlinkBytes: 1n })),
      { subscriptionId: sub, uplinkBytes: 3n, downlinkBytes: 4n },
    ]);
    await usageFolded(g.s.deps.db);
    expect(agent.acks).toEqual([1n]);
    expect(await used(sub)).toBe(7);
    expect(await droppedOn(node.id)).toBe(bad.length);
    // The stream is still open: the next report is acknowledged too.
    await agent.sendUsage(2n, [{ subscriptionId: 'sub_\u0000', uplinkBytes: 1n, downlinkBytes: 1n }]);
    await usageFolded(g.s.deps.db);
    expect(agent.acks).toEqual([1n, 2n]);
  });
});

import { CutoffReason } from '@svc/proto';
import type { AgentSimulator } from '@svc/testkit/agent-simulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Gateway, nodeRow, startGateway } from './harness.ts';

// Issue 36 through the real transport (gRPC over TLS, the agent simulator, the admin API): the
// control plane's clock on stream open, NodeConfig.user_limits in the desired state, a traffic
// slice granted again past half, CutoffReport recorded exactly once and acknowledged every time,
// StatusReport.enforcement stored and shown on the node (null for an agent that sends none).

let g: Gateway;
beforeAll(async () => {
  g = await startGateway();
});
afterAll(async () => {
  await g.stop();
});

const DAY = 86_400_000;

async function post(path: string, body: unknown) {
  const res = await g.s.api.post(path, body, { token: await g.token() });
  expect(res.status, `${path} ${res.text}`).toBe(201);
  return res.body;
}

/** A node with one inbound in one group, and its enrolled agent (not connected yet). */
async function servedNode(tag: string) {
  const { node, agent } = await g.enrolledAgent();
  const profile = await post('/api/v1/inbound-profiles', {
    name: `${tag}-p`,
    protocol: 'vless',
    stream: { network: 'tcp', security: 'none' },
  });
  const inbound = await post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 443 });
  const group = await post('/api/v1/access-groups', { name: `${tag}-g`, inbound_ids: [inbound.id] });
  const client = await post('/api/v1/clients', { email: `${tag}@example.com` });
  return { node, agent, group, client };
}

const limitsOf = (agent: AgentSimulator, id: string) => agent.desiredStates.at(-1)?.config?.userLimits.find((u) => u.subscriptionId === id);

describe('the limits through the gateway (issue 36)', () => {
  it('sends the control plane clock each time the stream opens', async () => {
    const { node, agent } = await servedNode('clk');
    agent.connect();
    await agent.waitForRevision(BigInt((await nodeRow(g, node.id)).desired_revision));
    expect(agent.clocks).toEqual([BigInt(g.s.clock.now().getTime())]);
    await agent.disconnect();
    agent.connect();
    await agent.waitFor(() => agent.clocks.length === 2, 5000, 'a second clock');
  });

  it('carries each served subscription limits and its slice in the desired state; none for one without limits', async () => {
    const { node, agent, group, client } = await servedNode('ul');
    const expires = new Date(g.s.clock.now().getTime() + 30 * DAY).toISOString();
    const all = await post('/api/v1/subscriptions', {
      client_id: client.id,
      access_group_ids: [group.id],
      device_limit: 2,
      upload_bps: 1_000_000,
      download_bps: 8_000_000,
      expires_at: expires,
      traffic_limit_bytes: 1_000_000,
    });
    const none = await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] });
    expect(all).toMatchObject({ device_limit: 2, upload_bps: 1_000_000, download_bps: 8_000_000 });
    expect(none).toMatchObject({ device_limit: null, upload_bps: null, download_bps: null });

    agent.connect();
    await agent.waitForRevision(BigInt((await nodeRow(g, node.id)).desired_revision));
    const entry = limitsOf(agent, all.id);
    expect(entry).toMatchObject({
      deviceLimit: 2,
      uploadBps: 1_000_000n,
      downloadBps: 8_000_000n,
      notAfterMs: BigInt(Date.parse(expires)),
      sliceBytes: 1_000_000n,
    });
    expect(entry?.sliceId).toBeGreaterThan(0n);
    expect(limitsOf(agent, none.id)).toBeUndefined();

    // A PATCH of a live limit reaches the node.
    const patched = await g.s.api.patch(
      `/api/v1/subscriptions/${all.id}`,
      { device_limit: 3, upload_bps: null },
      { token: await g.token() },
    );
    expect(patched.status, patched.text).toBe(200);
    await agent.waitFor(() => limitsOf(agent, all.id)?.deviceLimit === 3, 5000, 'device limit 3');
    expect(limitsOf(agent, all.id)?.uploadBps).toBe(0n);
  });

  it('grants a new slice (new slice_id, what remains) once the node reports half of its slice used', async () => {
    const { node, agent, group, client } = await servedNode('sl');
    const sub = await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id], traffic_limit_bytes: 1_000_000 });
    agent.connect();
    await agent.waitForRevision(BigInt((await nodeRow(g, node.id)).desired_revision));
    const first = limitsOf(agent, sub.id);
    expect(first?.sliceBytes).toBe(1_000_000n);

    // Under half: no new slice, no new revision.
    const before = BigInt((await nodeRow(g, node.id)).desired_revision);
    await agent.sendUsage(1n, [{ subscriptionId: sub.id, uplinkBytes: 100_000n, downlinkBytes: 300_000n }]);
    expect(BigInt((await nodeRow(g, node.id)).desired_revision)).toBe(before);

    // Past half: a new slice of what remains (400,000 bytes), under a higher id.
    await agent.sendUsage(2n, [{ subscriptionId: sub.id, uplinkBytes: 100_000n, downlinkBytes: 100_000n }]);
    await agent.waitFor(() => (limitsOf(agent, sub.id)?.sliceId ?? 0n) > (first?.sliceId ?? 0n), 5000, 'a new slice');
    expect(limitsOf(agent, sub.id)?.sliceBytes).toBe(400_000n);
  });

  it('records a CutoffReport once and acknowledges it every time it comes; a slice cut with traffic left gets a new slice', async () => {
    const { node, agent, group, client } = await servedNode('cut');
    const sub = await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id], traffic_limit_bytes: 5_000_000 });
    agent.connect();
    await agent.waitForRevision(BigInt((await nodeRow(g, node.id)).desired_revision));
    const slice = limitsOf(agent, sub.id);
    expect(slice?.sliceBytes).toBe(5_000_000n);
    const cut = {
      subscriptionId: sub.id,
      reason: CutoffReason.CUTOFF_SLICE,
      atMs: BigInt(g.s.clock.now().getTime()),
      sliceId: slice?.sliceId ?? 0n,
      sliceUsedBytes: 5_000_000n,
    };
    await agent.sendCutoffs(1n, [cut]);
    // The agent did not hear the ack (a reconnect): the same report again.
    await agent.sendCutoffs(1n, [cut]);
    expect(agent.cutoffAcks).toEqual([1n, 1n]);

    const rows = await g.s.deps.db.selectFrom('node_cutoffs').selectAll().where('node_id', '=', node.id).execute();
    expect(rows.map((r) => [r.subscription_id, r.reason, String(r.slice_id), String(r.slice_used_bytes)])).toEqual([
      [sub.id, 'slice', String(slice?.sliceId), '5000000'],
    ]);
    const events = await g.s.deps.db
      .selectFrom('events')
      .select(['type', 'payload'])
      .where('type', '=', 'subscription.cut_off_by_node')
      .execute();
    expect(events.filter((e) => (e.payload as { subscription_id: string }).subscription_id === sub.id)).toHaveLength(1);

    // The subscription has traffic left (the control plane counted none of it): a fresh slice, served again.
    await agent.waitFor(() => (limitsOf(agent, sub.id)?.sliceId ?? 0n) > (slice?.sliceId ?? 0n), 5000, 'a fresh slice');
    expect(String((await nodeRow(g, node.id)).last_cutoff_report_id)).toBe('1');
  });

  it('stores what the agent enforces and shows it on the node; an agent that sends none shows null', async () => {
    const { node: modern, agent } = await g.enrolledAgent();
    const { node: old, agent: oldAgent } = await g.enrolledAgent();
    agent.connect();
    oldAgent.connect();
    agent.sendStatus({
      enforcement: {
        deviceLimits: true,
        speedCaps: false,
        entitlements: true,
        speedCapsError: 'no CAP_NET_ADMIN',
        deviceLimitsError: '',
        deviceSource: 'access-log',
        shapedDevices: [],
      },
    });
    oldAgent.sendStatus();
    const view = async (id: string) => (await g.s.api.get(`/api/v1/nodes/${id}`, { token: await g.token() })).body;
    await eventually(async () =>
      expect((await view(modern.id)).enforcement).toEqual({
        device_limits: true,
        speed_caps: false,
        entitlements: true,
        speed_caps_error: 'no CAP_NET_ADMIN',
        device_limits_error: '',
        device_source: 'access-log',
        shaped_devices: [],
        reported_at: g.s.clock.now().toISOString(),
      }),
    );
    await eventually(async () => expect((await view(old.id)).status).not.toBeNull());
    expect((await view(old.id)).enforcement).toBeNull();
  });
});

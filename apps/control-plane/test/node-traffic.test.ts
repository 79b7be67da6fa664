import { mountAdminApi } from '@svc/admin-api';
import { createPortalApi } from '@svc/portal-api';
import { usageFolded } from '@svc/testkit';
import type { AgentSimulator } from '@svc/testkit/agent-simulator';
import { createWorker } from '@svc/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Gateway, nodeRow, startGateway } from './harness.ts';

// Issue 35.4 through the real transports: usage reported over the agent's gRPC stream (the agent
// simulator), the node's settings and views over the admin API, the links over GET /sub/{token}
// (the portal mounted beside it), the period reset by the worker's scheduled sweep on the test
// clock.

const DAY = 86_400_000;
let g: Gateway;
let stopWorker: () => Promise<void>;
const portal = createPortalApi();
beforeAll(async () => {
  g = await startGateway({
    server: { env: { SVC_SUB_CACHE_SECONDS: '30' } },
    mount: (root) => {
      root.route('/', portal.routes);
      return [mountAdminApi(root), portal];
    },
  });
  // The sweeps run every 100 ms of real time and read the test clock.
  const worker = createWorker(g.s.runtime, { sweepEveryMs: 100 });
  await worker.start();
  stopWorker = worker.stop;
});
afterAll(async () => {
  await stopWorker?.();
  await g?.stop();
});

const api = async (method: 'get' | 'post' | 'patch', path: string, body?: unknown) => {
  const token = await g.token();
  const res = method === 'get' ? await g.s.api.get(path, { token }) : await g.s.api[method](path, body, { token });
  expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
  return res.body;
};

/** A node with an agent on its stream, serving one VLESS inbound to one new subscription. */
async function servingNode(name: string) {
  const { node, agent } = await g.enrolledAgent();
  const profile = await api('post', '/api/v1/inbound-profiles', {
    name: `${name}-vless`,
    protocol: 'vless',
    stream: { network: 'tcp', security: 'none' },
  });
  const inbound = await api('post', '/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 443 });
  const group = await api('post', '/api/v1/access-groups', { name: `${name}-g`, inbound_ids: [inbound.id] });
  const client = await api('post', '/api/v1/clients', { email: `${name}@example.com` });
  const sub = await api('post', '/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] });
  agent.connect();
  await agent.waitForRevision(BigInt((await nodeRow(g, node.id)).desired_revision));
  return { node, agent, inbound, sub };
}

/** The tags of the inbounds the agent was last sent (its DesiredState), once it was sent the node's current revision. */
async function runs(agent: AgentSimulator, nodeId: string): Promise<string[]> {
  await agent.waitForRevision(BigInt((await nodeRow(g, nodeId)).desired_revision));
  return (agent.desiredStates.at(-1)?.config?.xray?.inbounds ?? []).map((i) => i.tag);
}

/**
 * The servers GET /sub/{token} answers an app with: its share links but the placeholder an app is
 * given when nothing serves ("No servers available", at 0.0.0.0:1).
 */
async function links(link: string): Promise<string[]> {
  const res = await fetch(`${g.s.url}${new URL(link).pathname}`, { headers: { 'user-agent': 'v2rayNG/1.9.30' } });
  expect(res.status).toBe(200);
  return Buffer.from(await res.text(), 'base64')
    .toString('utf8')
    .split('\n')
    .filter((l) => l && new URL(l).hostname !== '0.0.0.0');
}

const usedBytes = async (subId: string) => (await api('get', `/api/v1/subscriptions/${subId}`)).used_bytes as number;

describe('a node’s traffic multiplier, through the agent stream and the admin API', () => {
  it('a multiplier of 2 charges twice the bytes reported and keeps the raw bytes; 0 charges nothing', async () => {
    const { node, agent, sub } = await servingNode('mult');
    expect(await api('patch', `/api/v1/nodes/${node.id}`, { traffic_multiplier: 2 })).toMatchObject({ traffic_multiplier: 2 });

    await agent.sendUsage(1n, [{ subscriptionId: sub.id, uplinkBytes: 1_000n, downlinkBytes: 3_000n }]);
    await usageFolded(g.s.deps.db);
    expect(await usedBytes(sub.id)).toBe(8_000);
    const byNode = await api('get', `/api/v1/subscriptions/${sub.id}/usage/nodes`);
    expect(byNode.items).toEqual([
      {
        node_id: node.id,
        node_name: node.name,
        uplink_bytes: 2_000,
        downlink_bytes: 6_000,
        raw_uplink_bytes: 1_000,
        raw_downlink_bytes: 3_000,
      },
    ]);
    expect((await api('get', `/api/v1/nodes/${node.id}`)).traffic).toMatchObject({
      total_raw_bytes: 4_000,
      total_charged_bytes: 8_000,
      period_bytes: 4_000,
    });

    await api('patch', `/api/v1/nodes/${node.id}`, { traffic_multiplier: 0 });
    await agent.sendUsage(2n, [{ subscriptionId: sub.id, uplinkBytes: 5_000n, downlinkBytes: 5_000n }]);
    await usageFolded(g.s.deps.db);
    expect(await usedBytes(sub.id)).toBe(8_000);
    expect((await api('get', `/api/v1/subscriptions/${sub.id}/usage/nodes`)).items).toMatchObject([
      { uplink_bytes: 2_000, downlink_bytes: 6_000, raw_uplink_bytes: 6_000, raw_downlink_bytes: 8_000 },
    ]);
    expect((await api('get', `/api/v1/nodes/${node.id}`)).traffic).toMatchObject({ total_raw_bytes: 14_000, total_charged_bytes: 8_000 });
  });

  it('a multiplier or quota out of range is a 400 naming the field', async () => {
    const { node } = await g.enrolledAgent();
    const token = await g.token();
    for (const [body, field] of [
      [{ traffic_multiplier: 101 }, 'traffic_multiplier'],
      [{ traffic_multiplier: -0.5 }, 'traffic_multiplier'],
      [{ traffic_multiplier: 1.00001 }, 'traffic_multiplier'],
      [{ traffic_quota_bytes: -1 }, 'traffic_quota_bytes'],
      [{ traffic_quota_bytes: '1000' }, 'traffic_quota_bytes'],
      [{ traffic_quota_renewal: 'year' }, 'traffic_quota_renewal'],
    ] as const) {
      const res = await g.s.api.patch(`/api/v1/nodes/${node.id}`, body, { token });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(Object.keys(res.body.errors ?? {}), JSON.stringify(body)).toEqual([field]);
    }
    const created = await g.s.api.post(
      '/api/v1/nodes',
      { name: 'bad-mult', address: 'bad.example.net', traffic_multiplier: 1e9 },
      { token },
    );
    expect(created.status).toBe(400);
    expect(Object.keys(created.body.errors ?? {})).toEqual(['traffic_multiplier']);
  });
});

describe('a node’s traffic quota, through the agent stream, the admin API and the links', () => {
  it('a node over its quota disappears from links and its inbounds from its desired state, and comes back at the reset and when the quota is raised', async () => {
    const start = g.s.clock.now();
    const { node, agent, inbound, sub } = await servingNode('quota');
    expect(await runs(agent, node.id)).toContain(inbound.tag);
    expect(await links(sub.link)).toHaveLength(1);

    const set = await api('patch', `/api/v1/nodes/${node.id}`, { traffic_quota_bytes: 10_000, traffic_quota_renewal: 'day' });
    expect(set).toMatchObject({ traffic_quota_bytes: 10_000, traffic_quota_renewal: 'day', traffic: { limited_since: null } });
    expect(set.traffic.resets_at).toBe(new Date(Math.floor(start.getTime() / DAY) * DAY + DAY).toISOString());

    // 6,000 then 4,000 raw bytes: the quota is reached with the second report.
    await agent.sendUsage(1n, [{ subscriptionId: sub.id, uplinkBytes: 6_000n, downlinkBytes: 0n }]);
    await usageFolded(g.s.deps.db);
    expect((await api('get', `/api/v1/nodes/${node.id}`)).traffic.limited_since).toBeNull();
    await agent.sendUsage(2n, [{ subscriptionId: sub.id, uplinkBytes: 1_000n, downlinkBytes: 3_000n }]);
    await usageFolded(g.s.deps.db);
    const limited = await api('get', `/api/v1/nodes/${node.id}`);
    expect(limited.traffic).toMatchObject({ period_bytes: 10_000, limited_since: g.s.clock.now().toISOString() });
    expect(await runs(agent, node.id)).not.toContain(inbound.tag);
    expect(await links(sub.link)).toEqual([]);
    // Its subscriber was charged all of it, and is not limited: other nodes would still serve them.
    expect(await usedBytes(sub.id)).toBe(10_000);

    // The next day (UTC) the worker's sweep starts a new period: the node is back, in its desired state and in the link.
    g.s.clock.set(new Date(Math.floor(g.s.clock.now().getTime() / DAY) * DAY + DAY + 1_000));
    await eventually(async () => expect((await api('get', `/api/v1/nodes/${node.id}`)).traffic.limited_since).toBeNull(), 10_000);
    expect((await api('get', `/api/v1/nodes/${node.id}`)).traffic.period_bytes).toBe(0);
    expect(await runs(agent, node.id)).toContain(inbound.tag);
    expect(await links(sub.link)).toHaveLength(1);

    // Over it again within the new day; raising the quota above what it carried brings it back at once.
    await agent.sendUsage(3n, [{ subscriptionId: sub.id, uplinkBytes: 12_000n, downlinkBytes: 0n }]);
    await usageFolded(g.s.deps.db);
    expect((await api('get', `/api/v1/nodes/${node.id}`)).traffic.limited_since).not.toBeNull();
    expect(await runs(agent, node.id)).not.toContain(inbound.tag);
    expect(await links(sub.link)).toEqual([]);
    const raised = await api('patch', `/api/v1/nodes/${node.id}`, { traffic_quota_bytes: 20_000 });
    expect(raised.traffic).toMatchObject({ period_bytes: 12_000, limited_since: null });
    expect(await runs(agent, node.id)).toContain(inbound.tag);
    expect(await links(sub.link)).toHaveLength(1);

    const actions = (await api('get', `/api/v1/audit-log?entity_id=${node.id}&limit=100`)).items.map((e: { action: string }) => e.action);
    expect(actions.filter((a: string) => a.startsWith('node.traffic')).sort()).toEqual(
      [
        'node.traffic_limited',
        'node.traffic_period_reset',
        'node.traffic_limit_lifted',
        'node.traffic_limited',
        'node.traffic_limit_lifted',
      ].sort(),
    );
  });
});

import { Protocol } from '@svc/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Gateway, nodeRow, startGateway } from './harness.ts';

/** The snapshots the gateway sends are compiled from the model (packages/desired-state). */
let g: Gateway;
let t: string;
beforeAll(async () => {
  g = await startGateway();
  t = await g.token();
});
afterAll(() => g.stop());

const post = async (path: string, body: unknown) => {
  const res = await g.s.api.post(path, body, { token: await g.token() });
  expect(res.status, res.text).toBe(201);
  return res.body;
};

describe('DesiredState content: real snapshots of the node', () => {
  it('carries the node inbounds with exactly the serving subscriptions as users; a disabled subscription leaves on the next revision', async () => {
    const { node, agent } = await g.enrolledAgent();
    const vless = await post('/api/v1/inbound-profiles', {
      name: `vless-${node.id}`,
      protocol: 'vless',
      stream: { network: 'tcp', security: 'reality', reality: { dest: 'www.example.com:443', server_names: ['www.example.com'] } },
    });
    const vmess = await post('/api/v1/inbound-profiles', {
      name: `vmess-${node.id}`,
      protocol: 'vmess',
      stream: { network: 'ws', security: 'none' },
    });
    const inA = await post('/api/v1/inbounds', { node_id: node.id, profile_id: vless.id, port: 443 });
    const inB = await post('/api/v1/inbounds', { node_id: node.id, profile_id: vmess.id, port: 8080 });
    const group = await post('/api/v1/access-groups', { name: `g-${node.id}`, inbound_ids: [inA.id] });
    const client = await post('/api/v1/clients', { email: `c-${node.id}@example.com` });
    const sub = await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] });
    const row = await g.s.deps.db.selectFrom('subscriptions').selectAll().where('id', '=', sub.id).executeTakeFirstOrThrow();

    agent.connect();
    const desired = BigInt((await nodeRow(g, node.id)).desired_revision);
    await agent.waitForRevision(desired);
    const config = agent.desiredStates.at(-1)?.config;
    const inbounds = config?.xray?.inbounds ?? [];
    expect(inbounds.map((i) => [i.tag, i.protocol, i.port])).toEqual([
      [inA.tag, Protocol.VLESS, 443],
      [inB.tag, Protocol.VMESS, 8080],
    ]);
    expect(inbounds[0]?.users).toEqual([{ email: `${sub.id}@svc`, vless: { id: row.vless_uuid, flow: '' } }]);
    expect(inbounds[1]?.users).toEqual([]);
    expect(inbounds[0]?.stream?.reality?.privateKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(config?.xray?.outbounds.map((o) => o.tag)).toEqual(['direct', 'block']);

    expect((await g.s.api.patch(`/api/v1/subscriptions/${sub.id}`, { status: 'disabled' }, { token: t })).status).toBe(200);
    const next = BigInt((await nodeRow(g, node.id)).desired_revision);
    expect(next).toBeGreaterThan(desired);
    await agent.waitForRevision(next);
    expect(agent.desiredStates.at(-1)?.config?.xray?.inbounds[0]?.users).toEqual([]);
    await eventually(async () => expect((await nodeRow(g, node.id)).applied_revision).toBe(Number(next)));
  });
});

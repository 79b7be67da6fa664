import { type CompiledDesiredState, compileDesiredState, compileDesiredStates } from '@svc/desired-state';
import { NodeConfig, Protocol } from '@svc/proto';
import { selfSignedCertificate } from '@svc/testkit';
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

describe('expiry as of the snapshot clock (spec: an expired subscription serves nobody, before any sweep writes it down)', () => {
  it('a stored-active subscription past its expiry is no user; one expiring later is, with its expiry read to the millisecond', async () => {
    const node = await post('/api/v1/nodes', { name: 'expiry-node', address: 'expiry.example.com' });
    const profile = await post('/api/v1/inbound-profiles', {
      name: 'expiry-vless',
      protocol: 'vless',
      stream: { network: 'tcp', security: 'none' },
    });
    const inbound = await post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 443 });
    const group = await post('/api/v1/access-groups', { name: 'expiry-group', inbound_ids: [inbound.id] });
    const client = await post('/api/v1/clients', { email: 'expiry@example.com' });
    const past = await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] });
    const ahead = await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] });
    const now = g.s.deps.clock.now().getTime();
    // Written straight to the rows: the stored status stays active, as before a sweep.
    await g.s.deps.db
      .updateTable('subscriptions')
      .set({ expires_at: new Date(now - 1) })
      .where('id', '=', past.id)
      .execute();
    await g.s.deps.db
      .updateTable('subscriptions')
      .set({ expires_at: new Date(now + 60_000) })
      .where('id', '=', ahead.id)
      .execute();
    const state = await compileDesiredState(g.s.deps, node.id);
    expect(state?.config.xray?.inbounds[0]?.users.map((u) => u.email)).toEqual([`${ahead.id}@svc`]);
  });
});

describe('one snapshot of many nodes (a burst of changes is read together)', () => {
  it('compiles every node exactly as it compiles alone: shared and overlapping access groups, a chain across the nodes, certificates only where referenced', async () => {
    const nodes = [];
    for (const k of [1, 2, 3]) nodes.push(await post('/api/v1/nodes', { name: `batch-${k}`, address: `batch-${k}.example.com` }));
    const [a, b, c] = nodes as Array<{ id: string }>;
    const cert = await post('/api/v1/certificates', {
      kind: 'uploaded',
      name: 'batch-edge',
      ...selfSignedCertificate({ cn: 'edge.example.com' }),
    });
    const vlessTls = await post('/api/v1/inbound-profiles', {
      name: 'batch-vless-tls',
      protocol: 'vless',
      stream: { network: 'tcp', security: 'tls', tls: { certificate_id: cert.id, server_names: ['edge.example.com'] } },
    });
    const trojanWs = await post('/api/v1/inbound-profiles', {
      name: 'batch-trojan-ws',
      protocol: 'trojan',
      stream: { network: 'ws', security: 'none' },
    });
    const ss = await post('/api/v1/inbound-profiles', {
      name: 'batch-ss',
      protocol: 'shadowsocks',
      shadowsocks_method: '2022-blake3-aes-128-gcm',
      stream: { network: 'tcp', security: 'none' },
    });
    const aTls = await post('/api/v1/inbounds', { node_id: a?.id, profile_id: vlessTls.id, port: 443 });
    const bWs = await post('/api/v1/inbounds', { node_id: b?.id, profile_id: trojanWs.id, port: 8080 });
    const bSs = await post('/api/v1/inbounds', { node_id: b?.id, profile_id: ss.id, port: 8388 });
    const cWs = await post('/api/v1/inbounds', { node_id: c?.id, profile_id: trojanWs.id, port: 8080 });
    const g1 = await post('/api/v1/access-groups', { name: 'batch-g1', inbound_ids: [aTls.id, bWs.id] });
    const g2 = await post('/api/v1/access-groups', { name: 'batch-g2', inbound_ids: [bWs.id, bSs.id, cWs.id] });
    const client = await post('/api/v1/clients', { email: 'batch@example.com' });
    const only1 = await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [g1.id] });
    const both = await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [g1.id, g2.id] });
    const only2 = await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [g2.id] });
    const off = await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [g1.id, g2.id] });
    expect((await g.s.api.patch(`/api/v1/subscriptions/${off.id}`, { status: 'disabled' }, { token: t })).status).toBe(200);
    const chain = await post('/api/v1/chains', {
      name: 'batch-chain',
      hops: [
        { node_id: a?.id, port: 31001 },
        { node_id: b?.id, port: 31002 },
      ],
    });
    const ids = [c?.id, 'node_does_not_exist', a?.id, b?.id] as string[];

    const together = new Map<string, CompiledDesiredState>();
    await compileDesiredStates(g.s.deps, ids, (id, state) => {
      together.set(id, state);
    });
    expect([...together.keys()], 'every existing node once, in the order asked').toEqual([c?.id, a?.id, b?.id]);
    for (const id of [a, b, c].map((n) => n?.id as string)) {
      const alone = await compileDesiredState(g.s.deps, id);
      const batched = together.get(id);
      expect(batched?.revision).toBe(alone?.revision);
      expect(Buffer.from(NodeConfig.encode(batched?.config as NodeConfig).finish())).toEqual(
        Buffer.from(NodeConfig.encode(alone?.config as NodeConfig).finish()),
      );
    }

    const users = (id: string | undefined, tag: string) =>
      together
        .get(id as string)
        ?.config.xray?.inbounds.find((i) => i.tag === tag)
        ?.users.map((u) => u.email)
        .sort();
    const emails = (...subs: Array<{ id: string }>) => subs.map((s) => `${s.id}@svc`).sort();
    expect(users(a?.id, aTls.tag)).toEqual(emails(only1, both));
    expect(users(b?.id, bWs.tag)).toEqual(emails(only1, both, only2));
    expect(users(b?.id, bSs.tag)).toEqual(emails(both, only2));
    expect(users(c?.id, cWs.tag)).toEqual(emails(both, only2));
    expect(together.get(a?.id as string)?.config.certificates.map((x) => x.id)).toEqual([cert.id]);
    expect(together.get(b?.id as string)?.config.certificates).toEqual([]);
    expect(together.get(c?.id as string)?.config.certificates).toEqual([]);
    expect(together.get(a?.id as string)?.config.xray?.outbounds.map((o) => o.tag)).toContain(`chain-out-${chain.id}`);
    expect(together.get(b?.id as string)?.config.xray?.inbounds.map((i) => i.tag)).toContain(`chain-in-${chain.id}`);
    expect(together.get(c?.id as string)?.config.xray?.inbounds.map((i) => i.tag)).toEqual([cWs.tag]);
  });
});

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENCODE_FROM_USERS } from '@svc/desired-state';
import { NodeConfig } from '@svc/proto';
import { AgentSimulator } from '@svc/testkit/agent-simulator';
import { parseScrape, type Scrape } from '@svc/testkit/metrics-scrape';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledSource, type SnapshotSource } from '../src/desired-state-source.ts';
import { type ControlPlane, createControlPlane } from '../src/server.ts';
import { eventually, type Gateway, nodeRow, startGateway } from './harness.ts';

// Issue 37.2: a big node's first push after a gateway restart is the message last sent to it,
// kept on disk (<data_dir>/last-push), while its revision stands and its content holds; through
// real gRPC over TLS, over the test database.

const USERS = ENCODE_FROM_USERS + 2_000;
let g: Gateway;
/** Nodes the gateways compiled (the kept source's inner source), in order. */
const compiled: string[] = [];
let inner: SnapshotSource | undefined;
const counting: SnapshotSource = (nodeId, revision) => {
  compiled.push(nodeId);
  inner ??= compiledSource(g.s.deps);
  return inner(nodeId, revision);
};
const others: ControlPlane[] = [];
beforeAll(async () => {
  // Written 300 ms after the send (the product waits 10 s for a node to stay unchanged): time
  // enough for the send's gzip to be kept with it.
  g = await startGateway({ gateway: { snapshots: counting, lastPushQuietMs: 300 } });
});
afterAll(async () => {
  for (const o of others) await o.stop().catch(() => {});
  await g.stop();
});

const scrape = async (): Promise<Scrape> => parseScrape(await g.s.deps.metrics.registry.metrics());
const big = (s: Scrape, source: string) => s.value('svc_gateway_big_desired_states_total', { source });
const keptDir = () => join(g.s.deps.config.data_dir, 'last-push');

/** Another gateway process of the installation over the same data dir: nothing in its memory. */
async function restartedGateway(): Promise<string> {
  const gateway = createControlPlane(g.s.deps, {
    host: '127.0.0.1',
    port: 0,
    tlsHosts: ['localhost', '127.0.0.1'],
    snapshots: counting,
    lastPushQuietMs: 300,
  });
  others.push(gateway);
  return `localhost:${(await gateway.start()).port}`;
}

/** A fresh agent process of the node (its identity, nothing applied) on `endpoint`; its first DesiredState. */
async function firstPush(agent: AgentSimulator, endpoint: string, revision: bigint) {
  const fresh = new AgentSimulator({ ...agent.opts, endpoint }, agent.nodeId, agent.certPem, agent.keyPem);
  fresh.connect({ appliedRevision: 0n });
  try {
    await fresh.waitForRevision(revision, 60_000);
    const state = fresh.desiredStates.at(-1);
    if (!state?.config) throw new Error('no config');
    return state.config;
  } finally {
    await fresh.disconnect();
  }
}

async function bigNode() {
  const { node, agent } = await g.enrolledAgent();
  const t = await g.token();
  const post = async (path: string, body: unknown) => (await g.s.api.post(path, body, { token: t })).body;
  const profile = await post('/api/v1/inbound-profiles', {
    name: `kept-${node.id}`,
    protocol: 'vless',
    stream: { network: 'tcp', security: 'none' },
  });
  const inbound = await post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 443 });
  const group = await post('/api/v1/access-groups', { name: `kept-${node.id}`, inbound_ids: [inbound.id] });
  const db = g.s.deps.db;
  const client = `cli_${node.id}`;
  await sql`insert into clients (id, email, status, created_at, updated_at) values (${client}, ${`${node.id}@example.com`}, 'active', now(), now())`.execute(
    db,
  );
  await sql`insert into subscriptions (id, client_id, status, vless_uuid, vmess_uuid, trojan_password, shadowsocks_password, token_hash, token_enc, created_at, updated_at, period_started_at)
            select ${`sub_${node.id}_`} || lpad(n::text, 8, '0'), ${client}, 'active', gen_random_uuid(), gen_random_uuid(),
                   md5(${node.id} || n::text), md5('ss' || n::text), md5(${node.id} || 't' || n::text), 'x', now(), now(), now()
              from generate_series(1, ${USERS}) as n`.execute(db);
  await sql`insert into subscription_access_groups (subscription_id, access_group_id)
            select id, ${group.id} from subscriptions where client_id = ${client}`.execute(db);
  await sql`update nodes set desired_revision = desired_revision + 1 where id = ${node.id}`.execute(db);
  return { node, agent, group, client, desired: BigInt((await nodeRow(g, node.id)).desired_revision) };
}

const keptFile = (nodeId: string) => join(keptDir(), `${Buffer.from(nodeId).toString('base64url')}.lpm`);
const userCount = (c: NodeConfig) => c.xray?.inbounds[0]?.users.length;

describe('a big node’s last push kept on disk (grpc.last_push_disk_mb)', () => {
  it(
    'a restarted gateway’s first push to a node whose revision has not moved is the kept message: the same config, nothing compiled',
    { timeout: 120_000 },
    async () => {
      const { node, agent, desired } = await bigNode();
      const before = await scrape();
      agent.connect();
      await agent.waitForRevision(desired, 60_000);
      const sent = agent.desiredStates.at(-1)?.config as NodeConfig;
      expect(userCount(sent)).toBe(USERS);
      expect(compiled.filter((id) => id === node.id)).toHaveLength(1);
      await eventually(async () => expect(existsSync(keptFile(node.id))).toBe(true), 10_000);
      // The send's gzip (level 1, the default) kept with it: the head names its level.
      expect(readFileSync(keptFile(node.id)).readUInt32LE(24)).toBe(1);
      await agent.disconnect();

      // Sent from the kept bytes and their kept gzip: the agent decodes the same config.
      const endpoint = await restartedGateway();
      const again = await firstPush(agent, endpoint, desired);
      expect(Buffer.from(NodeConfig.encode(again).finish()).equals(Buffer.from(NodeConfig.encode(sent).finish()))).toBe(true);
      expect(compiled.filter((id) => id === node.id)).toHaveLength(1);
      const after = await scrape();
      expect(big(after, 'kept') - big(before, 'kept')).toBe(1);
      expect(big(after, 'compiled') - big(before, 'compiled')).toBe(1);

      // A change: the new revision is compiled, sent and kept in its place.
      await sql`update subscriptions set status = 'disabled' where id = ${`sub_${node.id}_00000001`}`.execute(g.s.deps.db);
      await sql`update nodes set desired_revision = desired_revision + 1 where id = ${node.id}`.execute(g.s.deps.db);
      const next = desired + 1n;
      expect(userCount(await firstPush(agent, endpoint, next))).toBe(USERS - 1);
      expect(compiled.filter((id) => id === node.id)).toHaveLength(2);
      // Written once the node has been quiet for a while (300 ms here).
      await eventually(async () => expect(readFileSync(keptFile(node.id)).readBigUInt64LE(8)).toBe(next), 10_000);
      const third = await restartedGateway();
      expect(userCount(await firstPush(agent, third, next))).toBe(USERS - 1);
      expect(compiled.filter((id) => id === node.id)).toHaveLength(2);
    },
  );

  it(
    'a kept file damaged on disk is not sent: its gzip damaged, the message is deflated again; the message damaged, the node is compiled; every user arrives',
    { timeout: 120_000 },
    async () => {
      const { node, agent, desired } = await bigNode();
      agent.connect();
      await agent.waitForRevision(desired, 60_000);
      await eventually(async () => expect(existsSync(keptFile(node.id))).toBe(true), 10_000);
      await agent.disconnect();
      const damage = (at: number) => {
        const bytes = readFileSync(keptFile(node.id));
        bytes[at] = (bytes[at] as number) ^ 0x20;
        writeFileSync(keptFile(node.id), bytes);
      };
      const compiles = compiled.filter((id) => id === node.id).length;
      // The last bytes are the sealed gzip's.
      damage(readFileSync(keptFile(node.id)).length - 100);
      expect(userCount(await firstPush(agent, await restartedGateway(), desired))).toBe(USERS);
      expect(compiled.filter((id) => id === node.id)).toHaveLength(compiles);
      // Past the 32-byte head, the sealed message's.
      damage(32 + 1000);
      expect(userCount(await firstPush(agent, await restartedGateway(), desired))).toBe(USERS);
      expect(compiled.filter((id) => id === node.id)).toHaveLength(compiles + 1);
    },
  );

  it('a small node is compiled every time and nothing is kept for it', { timeout: 60_000 }, async () => {
    const { node, agent } = await g.enrolledAgent();
    const desired = BigInt((await nodeRow(g, node.id)).desired_revision);
    agent.connect();
    await agent.waitForRevision(desired, 30_000);
    await agent.disconnect();
    expect(readdirSync(keptDir()).some((f) => f.startsWith(Buffer.from(node.id).toString('base64url')))).toBe(false);
  });

  it(
    'once a member it serves is past its expiry (before the sweep writes it down), the kept message is not sent: compiled again without the member',
    { timeout: 120_000 },
    async () => {
      // Last: it moves the installation's clock an hour on.
      const { node, agent, desired } = await bigNode();
      const expiring = `sub_${node.id}_00000002`;
      const expiresAt = new Date(g.s.clock.now().getTime() + 3_600_000);
      await sql`update subscriptions set expires_at = ${expiresAt} where id = ${expiring}`.execute(g.s.deps.db);
      agent.connect();
      await agent.waitForRevision(desired, 60_000);
      await eventually(async () => expect(existsSync(keptFile(node.id))).toBe(true), 10_000);
      await agent.disconnect();
      const compiles = compiled.filter((id) => id === node.id).length;

      // The gateway first (its server certificate is issued by the clock), then the hour passes.
      const endpoint = await restartedGateway();
      g.s.clock.advance(3_600_000);
      const config = await firstPush(agent, endpoint, desired);
      expect(userCount(config)).toBe(USERS - 1);
      expect(config.xray?.inbounds[0]?.users.some((u) => u.email === `${expiring}@svc`)).toBe(false);
      expect(compiled.filter((id) => id === node.id)).toHaveLength(compiles + 1);
    },
  );
});

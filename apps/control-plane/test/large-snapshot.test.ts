import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Gateway, nodeRow, startGateway } from './harness.ts';

/**
 * Issue 5 item 4: a node with 100,000 users on two inbounds gets its snapshot through the
 * stream (server send limit raised, gzip on; the simulator, like an agent, raises its receive
 * limit). Rows are seeded with SQL: the API path is covered elsewhere.
 */
const USERS = 100_000;
let g: Gateway;
beforeAll(async () => {
  g = await startGateway();
});
afterAll(() => g.stop());

describe('large snapshots', () => {
  it(`a node with ${USERS.toLocaleString('en')} users on two inbounds receives all of them`, { timeout: 180_000 }, async () => {
    const { node, agent } = await g.enrolledAgent();
    const t = await g.token();
    const post = async (path: string, body: unknown) => (await g.s.api.post(path, body, { token: t })).body;
    const vless = await post('/api/v1/inbound-profiles', {
      name: 'big-vless',
      protocol: 'vless',
      stream: { network: 'tcp', security: 'none' },
    });
    const trojan = await post('/api/v1/inbound-profiles', {
      name: 'big-trojan',
      protocol: 'trojan',
      stream: { network: 'ws', security: 'none' },
    });
    const a = await post('/api/v1/inbounds', { node_id: node.id, profile_id: vless.id, port: 443 });
    const b = await post('/api/v1/inbounds', { node_id: node.id, profile_id: trojan.id, port: 8443 });
    const group = await post('/api/v1/access-groups', { name: 'big', inbound_ids: [a.id, b.id] });
    const db = g.s.deps.db;
    await sql`insert into clients (id, email, status, created_at, updated_at)
              values ('cli_big', 'big@example.com', 'active', now(), now())`.execute(db);
    await sql`insert into subscriptions (id, client_id, status, vless_uuid, vmess_uuid, trojan_password, shadowsocks_password, token_hash, token_enc, created_at, updated_at, period_started_at)
              select 'sub_big' || lpad(n::text, 20, '0'), 'cli_big', 'active', gen_random_uuid(), gen_random_uuid(),
                     md5(n::text), md5('ss' || n::text), md5('t' || n::text), 'x', now(), now(), now()
                from generate_series(1, ${USERS}) as n`.execute(db);
    await sql`insert into subscription_access_groups (subscription_id, access_group_id)
              select id, ${group.id} from subscriptions where client_id = 'cli_big'`.execute(db);
    await sql`update nodes set desired_revision = desired_revision + 1 where id = ${node.id}`.execute(db);
    const desired = BigInt((await nodeRow(g, node.id)).desired_revision);

    agent.connect();
    await agent.waitForRevision(desired, 150_000);
    const inbounds = agent.desiredStates.at(-1)?.config?.xray?.inbounds ?? [];
    expect(inbounds.map((i) => i.users.length)).toEqual([USERS, USERS]);
    expect(new Set(inbounds[0]?.users.map((u) => u.email)).size).toBe(USERS);
    await eventually(async () => expect((await nodeRow(g, node.id)).applied_revision).toBe(Number(desired)), 30_000);
  });
});

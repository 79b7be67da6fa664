import {
  type CompiledDesiredState,
  compileDesiredState,
  compileDesiredStates,
  createMemberCache,
  createSliceCache,
  loadNodeModel,
  type ModelDeps,
} from '@svc/desired-state';
import { ingestCutoffReport, ingestUsageReport } from '@svc/domain';
import { encodeFlat, ServerMessage } from '@svc/proto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Gateway, startGateway } from './harness.ts';

/**
 * The member cache (packages/desired-state/src/member-cache.ts) and the slice cache
 * (slice-cache.ts) may change how a snapshot is read, never what it is: every compile through
 * them must equal a compile that reads everything, after every kind of change a member or a
 * traffic slice can go through, on PGlite and on PostgreSQL.
 */
let g: Gateway;
let t: string;
beforeAll(async () => {
  g = await startGateway();
  t = await g.token();
});
afterAll(() => g.stop());

const call = async (method: 'post' | 'patch', path: string, body: unknown, status: number) => {
  const res = await g.s.api[method](path, body, { token: t });
  expect(res.status, res.text).toBe(status);
  return res.body;
};

describe('member cache: a snapshot that re-reads only changed buckets compiles what a full read compiles', () => {
  it('equal configs after each change, and a change reads again only the buckets it touched', async () => {
    const node = await call('post', '/api/v1/nodes', { name: 'members', address: 'members.example.com' }, 201);
    const vless = await call(
      'post',
      '/api/v1/inbound-profiles',
      { name: 'members-vless', protocol: 'vless', stream: { network: 'tcp', security: 'none' } },
      201,
    );
    const trojan = await call(
      'post',
      '/api/v1/inbound-profiles',
      { name: 'members-trojan', protocol: 'trojan', stream: { network: 'tcp', security: 'none' } },
      201,
    );
    const a = await call('post', '/api/v1/inbounds', { node_id: node.id, profile_id: vless.id, port: 443 }, 201);
    const b = await call('post', '/api/v1/inbounds', { node_id: node.id, profile_id: trojan.id, port: 8443 }, 201);
    const group = await call('post', '/api/v1/access-groups', { name: 'members', inbound_ids: [a.id, b.id] }, 201);
    const other = await call('post', '/api/v1/access-groups', { name: 'members-other', inbound_ids: [a.id] }, 201);
    const clients = [];
    for (let k = 0; k < 3; k++) clients.push(await call('post', '/api/v1/clients', { email: `members-${k}@example.com` }, 201));
    const subs: Array<{ id: string }> = [];
    for (let k = 0; k < 40; k++)
      subs.push(
        await call(
          'post',
          '/api/v1/subscriptions',
          { client_id: clients[k % 3].id, access_group_ids: k % 10 === 0 ? [group.id, other.id] : [group.id], traffic_limit_bytes: 10_000 },
          201,
        ),
      );

    const withLimit = new Set(subs.map((x) => `${x.id}@svc`));
    // Small groups count as big here (both groups are kept), so the cache is used from the first read on.
    const members = createMemberCache({ maxRows: 10_000, minGroupRows: 2 });
    const slices = createSliceCache({ maxRows: 10_000, minNodeRows: 2 });
    const cached: ModelDeps = { ...g.s.deps, members, slices };
    // The same through caches of its own, encoded as a big node is.
    const cachedEncoded: ModelDeps = {
      ...g.s.deps,
      members: createMemberCache({ maxRows: 10_000, minGroupRows: 2 }),
      slices: createSliceCache({ maxRows: 10_000, minNodeRows: 2 }),
    };
    const same = async (label: string) => {
      const full = (await compileDesiredState(g.s.deps, node.id)) as CompiledDesiredState;
      const through = (await compileDesiredState(cached, node.id)) as CompiledDesiredState;
      expect(through, label).toEqual(full);
      // Encoded as a big node is (members in runs kept from the compile before, by member object): the same bytes.
      let encoded: Uint8Array | undefined;
      await compileDesiredStates(
        cachedEncoded,
        [node.id],
        (_, s) => {
          encoded = s.encoded;
        },
        { encodeFromUsers: 1 },
      );
      const generated = encodeFlat(ServerMessage, { desiredState: { revision: BigInt(full.revision), config: full.config } });
      expect(Buffer.from(encoded ?? []).equals(Buffer.from(generated)), label).toBe(true);
      // Issue 36: no user with a traffic limit is on the node without a slice.
      const sliced = new Set(full.config.userLimits.filter((u) => u.sliceId > 0n).map((u) => `${u.subscriptionId}@svc`));
      for (const inbound of full.config.xray?.inbounds ?? [])
        for (const u of inbound.users) if (withLimit.has(u.email)) expect(sliced, label).toContain(u.email);
      return full;
    };
    const db = g.s.deps.db;
    const reads = () => members.stats.bucketsRead;

    const first = await same('first read (whole, then kept)');
    expect(first.config.xray?.inbounds.map((i) => i.users.length)).toEqual([40, 40]);
    expect(members.heldRows).toBeGreaterThan(0);
    let before = reads();
    await same('nothing changed');
    expect(reads(), 'nothing changed: no bucket read again').toBe(before);
    expect(members.stats.bucketsKept).toBeGreaterThan(0);

    // An admin disables one: at most its bucket is read again (none when it was alone in it: the bucket is just gone).
    await call('patch', `/api/v1/subscriptions/${subs[3]?.id}`, { status: 'disabled' }, 200);
    before = reads();
    await same('one disabled');
    expect(reads() - before).toBeLessThanOrEqual(1);

    // Credentials rotated.
    await call('post', `/api/v1/subscriptions/${subs[10]?.id}/rotate-credentials`, {}, 200);
    before = reads();
    await same('credentials rotated (a member of two groups)');
    expect(reads() - before).toBe(2);

    // Usage moves used_bytes under the limit: nothing the compiler reads changed, nothing re-read.
    await db
      .updateTable('subscription_counters')
      .set({ used_bytes: 9_999 })
      .where('subscription_id', '=', subs[5]?.id as string)
      .execute();
    before = reads();
    await same('usage under the limit');
    expect(reads(), 'used_bytes alone re-reads nothing').toBe(before);

    // ...and a report reaching the limit (the credit stores the subscription limited in its own unit) changes the users.
    const credit = await ingestUsageReport(g.s.deps, node.id, {
      report_id: 1n,
      entries: [{ subscription_id: subs[5]?.id as string, uplink_bytes: 1n, downlink_bytes: 0n }],
    });
    expect(credit.limited).toEqual([subs[5]?.id]);
    before = reads();
    const limited = await same('limit reached by a credit');
    expect(reads() - before).toBeLessThanOrEqual(1);
    expect(limited.config.xray?.inbounds[0]?.users.map((u) => u.email)).not.toContain(`${subs[5]?.id}@svc`);

    // Expiry moved into the past behind the status's back; limit raised; a client disabled; a member left a group; a new member.
    const now = g.s.deps.clock.now().getTime();
    await db
      .updateTable('subscriptions')
      .set({ expires_at: new Date(now - 1000) })
      .where('id', '=', subs[7]?.id as string)
      .execute();
    await same('expired before a sweep');
    await call('patch', `/api/v1/subscriptions/${subs[5]?.id}`, { traffic_limit_bytes: 20_000 }, 200);
    await same('limit raised');
    await call('patch', `/api/v1/clients/${clients[1].id}`, { status: 'disabled' }, 200);
    const disabledClient = await same('a client disabled');
    expect(disabledClient.config.xray?.inbounds[0]?.users.length).toBeLessThan(30);
    await db
      .deleteFrom('subscription_access_groups')
      .where('subscription_id', '=', subs[20]?.id as string)
      .where('access_group_id', '=', group.id)
      .execute();
    await same('a member left the group');
    await call('post', '/api/v1/subscriptions', { client_id: clients[0].id, access_group_ids: [group.id] }, 201);
    const last = await same('a new member');
    // subs[20] is still in the other group, which grants only the vless inbound.
    const users = (port: number) => last.config.xray?.inbounds.find((i) => i.port === port)?.users.map((u) => u.email);
    expect(users(8443)).not.toContain(`${subs[20]?.id}@svc`);
    expect(users(443)).toContain(`${subs[20]?.id}@svc`);

    // Traffic slices (issue 36): kept for the node, only those granted since read again.
    const sliceOf = async (sub: string) =>
      (
        await db
          .selectFrom('traffic_slices')
          .select(['slice_id', 'slice_bytes'])
          .where('node_id', '=', node.id)
          .where('subscription_id', '=', sub)
          .executeTakeFirst()
      )?.slice_id.toString();
    const limitOf = (state: CompiledDesiredState, sub: string) => state.config.userLimits.find((u) => u.subscriptionId === sub);
    expect(slices.heldRows).toBeGreaterThan(0);
    let stats = { ...slices.stats };
    await same('slices: nothing granted');
    expect(slices.stats.kept - stats.kept, 'nothing granted: the kept slices used').toBe(1);
    // A credit past half of a slice grants its successor in the credit's unit.
    const s1 = subs[6]?.id as string; // (client 0: active; client 1 was disabled above)
    const before1 = await sliceOf(s1);
    const half = await ingestUsageReport(g.s.deps, node.id, {
      report_id: 2n,
      entries: [{ subscription_id: s1, uplink_bytes: 6_000n, downlink_bytes: 0n }],
    });
    expect(half.limited).toEqual([]);
    expect(BigInt((await sliceOf(s1)) as string)).toBeGreaterThan(BigInt(before1 as string));
    stats = { ...slices.stats };
    const successor = await same('slices: a successor granted by a credit');
    expect(slices.stats.merged - stats.merged, 'a new slice: merged with the kept ones').toBe(1);
    expect(String(limitOf(successor, s1)?.sliceId)).toBe(await sliceOf(s1));
    // A slice cut-off with traffic left: granted again.
    const s2 = subs[2]?.id as string;
    const cut = await ingestCutoffReport(g.s.deps, node.id, {
      report_id: 1n,
      entries: [
        {
          subscription_id: s2,
          reason: 'slice',
          at_ms: BigInt(now),
          slice_id: BigInt((await sliceOf(s2)) as string),
          slice_used_bytes: 10_000n,
        },
      ],
    });
    expect(cut.regranted.map((x) => x.subscription_id)).toEqual([s2]);
    await same('slices: granted again after a cut-off');
    // A subscription deleted takes its slice along, and another slice is granted before the next
    // snapshot: the merge holds one slice more than the node has, so the node is read whole.
    const res = await g.s.api.delete(`/api/v1/subscriptions/${subs[30]?.id}`, { token: t });
    expect(res.status, res.text).toBe(204);
    await ingestUsageReport(g.s.deps, node.id, {
      report_id: 3n,
      entries: [{ subscription_id: subs[9]?.id as string, uplink_bytes: 6_000n, downlink_bytes: 0n }],
    });
    stats = { ...slices.stats };
    await same('slices: a subscription deleted, another slice granted');
    expect(slices.stats.readWhole - stats.readWhole, 'a slice gone: read whole').toBe(1);
    const { count } = await db
      .selectFrom('traffic_slices')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('node_id', '=', node.id)
      .executeTakeFirstOrThrow();
    expect(slices.heldRows, 'the kept slices are the node’s').toBe(Number(count));
    // A half-used slice without a successor (written behind the credit's back): the snapshot
    // shows it, the compile through the caches grants the successor and reads the node again.
    const s4 = subs[8]?.id as string;
    const before4 = (await sliceOf(s4)) as string;
    await db
      .updateTable('traffic_slices')
      .set((eb) => ({ used_bytes: eb.ref('slice_bytes') }))
      .where('node_id', '=', node.id)
      .where('subscription_id', '=', s4)
      .execute();
    const regranted = (await compileDesiredState(cached, node.id)) as CompiledDesiredState;
    const after4 = (await sliceOf(s4)) as string;
    expect(BigInt(after4)).toBeGreaterThan(BigInt(before4));
    expect(String(limitOf(regranted, s4)?.sliceId), 'compiled from a snapshot after the grant').toBe(after4);
    expect(regranted.revision).toBe(
      Number(
        (await db.selectFrom('nodes').select('desired_revision').where('id', '=', node.id).executeTakeFirstOrThrow()).desired_revision,
      ),
    );
    expect(await compileDesiredState(g.s.deps, node.id)).toEqual(regranted);
    // A new member with a limit: its first slice granted by the compile through the caches.
    const fresh = await call(
      'post',
      '/api/v1/subscriptions',
      { client_id: clients[0].id, access_group_ids: [group.id], traffic_limit_bytes: 50_000 },
      201,
    );
    withLimit.add(`${fresh.id}@svc`);
    const withFresh = (await compileDesiredState(cached, node.id)) as CompiledDesiredState;
    expect(limitOf(withFresh, fresh.id)?.sliceId).toBeGreaterThan(0n);
    expect(limitOf(withFresh, fresh.id)?.sliceBytes).toBe(50_000n);
    await same('slices: a new member with a limit');
    // A member stored active past its limit (until the enforce-limits job writes it down) and
    // without a slice: the snapshot shows it as maybe due, the grant gives nothing (the counters
    // decide), and the node is compiled from that first snapshot, not read again.
    const past = subs[11]?.id as string;
    await db.updateTable('subscription_counters').set({ used_bytes: 10_000 }).where('subscription_id', '=', past).execute();
    await db.deleteFrom('traffic_slices').where('node_id', '=', node.id).where('subscription_id', '=', past).execute();
    stats = { ...slices.stats };
    const once = (await compileDesiredState(cached, node.id)) as CompiledDesiredState;
    const snapshots = slices.stats.kept + slices.stats.merged + slices.stats.readWhole - (stats.kept + stats.merged + stats.readWhole);
    expect(snapshots, 'nothing granted: one snapshot').toBe(1);
    expect(await sliceOf(past)).toBeUndefined();
    expect(limitOf(once, past)?.sliceId).toBe(0n);
    expect(await compileDesiredState(g.s.deps, node.id)).toEqual(once);
  });

  it.each([
    ['one access group', 1],
    ['two access groups (members merged)', 2],
  ])('a member whose bucket is read again keeps its model object when its row did not change, also on the first change after a whole read: %s', async (_label, groupCount) => {
    const name = `same-${groupCount}`;
    const node = await call('post', '/api/v1/nodes', { name, address: `${name}.example.com` }, 201);
    const profile = await call(
      'post',
      '/api/v1/inbound-profiles',
      { name: `${name}-vless`, protocol: 'vless', stream: { network: 'tcp', security: 'none' } },
      201,
    );
    const inbound = await call('post', '/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 443 }, 201);
    const groups: string[] = [];
    for (let k = 0; k < groupCount; k++)
      groups.push((await call('post', '/api/v1/access-groups', { name: `${name}-${k}`, inbound_ids: [inbound.id] }, 201)).id);
    const group = { id: groups[0] as string };
    const client = await call('post', '/api/v1/clients', { email: `${name}@example.com` }, 201);
    const ids: string[] = [];
    // With two groups, every third member is in both.
    for (let k = 0; k < 40; k++)
      ids.push(
        (
          await call(
            'post',
            '/api/v1/subscriptions',
            { client_id: client.id, access_group_ids: k % 3 === 0 ? groups : [groups[k % groupCount]] },
            201,
          )
        ).id,
      );
    // A member that shares its bucket (the member cache's hash of the id) with another.
    const buckets = await sql<{
      id: string;
      bucket: number;
    }>`select id, hashtext(id) & 255 as bucket from subscriptions where id in (${sql.join(ids)})`.execute(g.s.deps.db);
    const count = new Map<number, number>();
    for (const r of buckets.rows) count.set(Number(r.bucket), (count.get(Number(r.bucket)) ?? 0) + 1);
    let shared = buckets.rows.find((r) => (count.get(Number(r.bucket)) ?? 0) > 1)?.id;
    while (!shared) {
      // 40 ids over 256 buckets share one almost always; add members until two do.
      const id = (await call('post', '/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] }, 201)).id as string;
      const b = Number((await sql<{ b: number }>`select hashtext(${id}) & 255 as b`.execute(g.s.deps.db)).rows[0]?.b);
      shared = buckets.rows.find((r) => Number(r.bucket) === b)?.id;
    }
    const cached: ModelDeps = { ...g.s.deps, members: createMemberCache({ maxRows: 10_000, minGroupRows: 2 }) };
    const before = await loadNodeModel(cached, node.id);
    const byId = new Map(before?.subscriptions.map((m) => [m.id, m]));
    await call('post', `/api/v1/subscriptions/${shared}/rotate-credentials`, {}, 200);
    const after = await loadNodeModel(cached, node.id);
    expect(after?.subscriptions.length).toBe(before?.subscriptions.length);
    for (const m of after?.subscriptions ?? []) {
      if (m.id === shared) expect(m.vless_uuid).not.toBe(byId.get(m.id)?.vless_uuid);
      else expect(m, m.id).toBe(byId.get(m.id));
    }
  });

  it('a group read with other protocols (other credential columns) is not served from what was kept', async () => {
    const node = await call('post', '/api/v1/nodes', { name: 'members-shape', address: 'shape.example.com' }, 201);
    const vmess = await call(
      'post',
      '/api/v1/inbound-profiles',
      { name: 'shape-vmess', protocol: 'vmess', stream: { network: 'tcp', security: 'none' } },
      201,
    );
    const inbound = await call('post', '/api/v1/inbounds', { node_id: node.id, profile_id: vmess.id, port: 443 }, 201);
    const group = await call('post', '/api/v1/access-groups', { name: 'shape', inbound_ids: [inbound.id] }, 201);
    const client = await call('post', '/api/v1/clients', { email: 'shape@example.com' }, 201);
    for (let k = 0; k < 8; k++) await call('post', '/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] }, 201);
    const members = createMemberCache({ maxRows: 10_000, minGroupRows: 5 });
    const cached: ModelDeps = { ...g.s.deps, members };
    expect(await compileDesiredState(cached, node.id)).toEqual(await compileDesiredState(g.s.deps, node.id));
    // The same group now also reaches a shadowsocks inbound: its members must be read with that credential too.
    const ss = await call(
      'post',
      '/api/v1/inbound-profiles',
      {
        name: 'shape-ss',
        protocol: 'shadowsocks',
        shadowsocks_method: 'chacha20-ietf-poly1305',
        stream: { network: 'tcp', security: 'none' },
      },
      201,
    );
    const second = await call('post', '/api/v1/inbounds', { node_id: node.id, profile_id: ss.id, port: 8388 }, 201);
    await call('patch', `/api/v1/access-groups/${group.id}`, { inbound_ids: [inbound.id, second.id] }, 200);
    const full = await compileDesiredState(g.s.deps, node.id);
    expect(full?.config.xray?.inbounds.find((i) => i.port === 8388)?.users[0]?.shadowsocks?.password).toBeTruthy();
    expect(await compileDesiredState(cached, node.id)).toEqual(full);
  });
});

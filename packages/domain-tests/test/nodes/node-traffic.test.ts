import { compileDesiredState } from '@svc/desired-state';
import {
  CreateNodeInput,
  createNode,
  getNode,
  getSubscriptionUsageByNode,
  ingestUsageReport,
  parseInput,
  readSubscriptionDocument,
  subscriptionsWithCounters,
  sweepNodeTrafficPeriods,
  UpdateNodeInput,
  updateNode,
} from '@svc/domain';
import { uniqueName } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { servedNode } from '../customers-support.ts';
import { auditOf, bumpsOf, fileTestbed, inputErrors, revisionsOf } from '../support.ts';

// Issue 35.4: a node's traffic multiplier scales what its usage charges to subscriptions (the raw
// bytes kept beside), and its traffic quota takes its inbounds out of service once the raw bytes
// it carried this period reach it, until the period resets or the quota is raised.

const t = fileTestbed();

const patch = (id: string, input: Record<string, unknown>) => updateNode(t.bed.ctx(), id, parseInput(UpdateNodeInput, input));
const entry = (subscription_id: string, up: number, down = 0) => ({
  subscription_id,
  uplink_bytes: BigInt(up),
  downlink_bytes: BigInt(down),
});
const subRow = (id: string) => subscriptionsWithCounters(t.bed.deps.db).where('id', '=', id).executeTakeFirstOrThrow();
const hourlyOf = (subscriptionId: string) =>
  t.bed.deps.db.selectFrom('usage_hourly').selectAll().where('subscription_id', '=', subscriptionId).execute();
const tokenOf = (link: string) => new URL(link).pathname.split('/').pop() as string;

/** A node serving one inbound to a new subscription (with `sub` fields), its multiplier and quota as given. */
async function nodeWithSubscriber(node: Record<string, unknown> = {}, sub: Record<string, unknown> = {}) {
  const served = await servedNode(t.bed.ctx());
  if (Object.keys(node).length > 0) await patch(served.node, node);
  const subscription = await t.f.subscription({ access_group_ids: served.groups, ...sub });
  return { ...served, sub: subscription };
}

describe('a node’s traffic multiplier', () => {
  it('a multiplier of 2 charges twice the bytes reported and keeps the raw bytes (hourly rows, the node’s totals, usage by node)', async () => {
    const { node, sub } = await nodeWithSubscriber({ traffic_multiplier: 2 });
    const result = await ingestUsageReport(t.bed.deps, node, { report_id: 1n, entries: [entry(sub.id, 1_000, 3_000)] });
    expect(result).toMatchObject({ applied: true, accepted: 1 });
    expect(await subRow(sub.id)).toMatchObject({
      used_bytes: 8_000,
      period_uplink_bytes: 2_000,
      period_downlink_bytes: 6_000,
      lifetime_used_bytes: 8_000,
    });
    expect(await hourlyOf(sub.id)).toMatchObject([
      { node_id: node, uplink_bytes: 2_000, downlink_bytes: 6_000, raw_uplink_bytes: 1_000, raw_downlink_bytes: 3_000 },
    ]);
    expect((await getNode(t.bed.ctx(), node)).traffic).toMatchObject({
      total_raw_bytes: 4_000,
      total_charged_bytes: 8_000,
      period_bytes: 4_000,
    });
    const from = new Date(t.bed.clock.now().getTime() - 3600_000);
    expect(await getSubscriptionUsageByNode(t.bed.ctx(), sub.id, from, new Date(t.bed.clock.now().getTime() + 3600_000))).toMatchObject([
      { node_id: node, uplink_bytes: 2_000, downlink_bytes: 6_000, raw_uplink_bytes: 1_000, raw_downlink_bytes: 3_000 },
    ]);
    // Exactly once still: the same report again charges nothing more.
    await ingestUsageReport(t.bed.deps, node, { report_id: 1n, entries: [entry(sub.id, 1_000, 3_000)] });
    expect(Number((await subRow(sub.id)).used_bytes)).toBe(8_000);
    expect((await getNode(t.bed.ctx(), node)).traffic.total_raw_bytes).toBe(4_000);
  });

  it('a multiplier of 0 charges nothing, yet the node counts what it carried and a term that starts on first use starts', async () => {
    const { node, sub } = await nodeWithSubscriber({ traffic_multiplier: 0 });
    // A term that starts on first use (only an import makes one: Marzban's "on hold").
    await t.bed.deps.db
      .updateTable('subscriptions')
      .set({ starts_on_first_use_seconds: 86_400, expires_at: null })
      .where('id', '=', sub.id)
      .execute();
    await ingestUsageReport(t.bed.deps, node, { report_id: 1n, entries: [entry(sub.id, 5_000, 7_000)] });
    const row = await subRow(sub.id);
    expect(row).toMatchObject({ used_bytes: 0, period_uplink_bytes: 0, period_downlink_bytes: 0, lifetime_used_bytes: 0 });
    expect(row.expires_at?.toISOString()).toBe(new Date(t.bed.clock.now().getTime() + 86_400_000).toISOString());
    expect(await hourlyOf(sub.id)).toMatchObject([
      { uplink_bytes: 0, downlink_bytes: 0, raw_uplink_bytes: 5_000, raw_downlink_bytes: 7_000 },
    ]);
    expect((await getNode(t.bed.ctx(), node)).traffic).toMatchObject({ total_raw_bytes: 12_000, total_charged_bytes: 0 });
  });

  it('charged bytes are raw × multiplier rounded down, per subscription and direction of a report, in exact decimals', async () => {
    const { node, groups, sub } = await nodeWithSubscriber({ traffic_multiplier: 0.3 });
    const other = await t.f.subscription({ access_group_ids: groups });
    // 0.3 is no exact binary fraction: 0.3 × 10 is 3 exactly here, where a float gives 2.9999…; two entries of one subscription are summed first.
    await ingestUsageReport(t.bed.deps, node, {
      report_id: 1n,
      entries: [entry(sub.id, 5, 3), entry(sub.id, 5, 0), entry(other.id, 3, 1)],
    });
    expect(await subRow(sub.id)).toMatchObject({ period_uplink_bytes: 3, period_downlink_bytes: 0, used_bytes: 3 });
    expect(await subRow(other.id)).toMatchObject({ period_uplink_bytes: 0, period_downlink_bytes: 0, used_bytes: 0 });
    await patch(node, { traffic_multiplier: 1.5 });
    await ingestUsageReport(t.bed.deps, node, { report_id: 2n, entries: [entry(other.id, 3, 1)] });
    // The multiplier in force when the report arrives: 4.5 → 4, 1.5 → 1; what was charged before stays.
    expect(await subRow(other.id)).toMatchObject({ period_uplink_bytes: 4, period_downlink_bytes: 1, used_bytes: 5 });
    expect((await getNode(t.bed.ctx(), node)).traffic).toMatchObject({ total_raw_bytes: 17 + 4, total_charged_bytes: 3 + 5 });
  });

  it('the traffic limit is judged on charged bytes: a report of half the limit on a node of multiplier 2 reaches it', async () => {
    const { node, sub } = await nodeWithSubscriber({ traffic_multiplier: 2 }, { traffic_limit_bytes: 1_000 });
    const result = await ingestUsageReport(t.bed.deps, node, { report_id: 1n, entries: [entry(sub.id, 300, 200)] });
    expect(result.limited).toEqual([sub.id]);
    expect(await subRow(sub.id)).toMatchObject({ status: 'limited', used_bytes: 1_000 });
  });

  it('a multiplier outside 0-100 or with more than four decimals, a negative or fractional quota and an unknown renewal are refused naming the field', async () => {
    const base = { name: uniqueName('node'), address: 'q.example.net' };
    expect(inputErrors(CreateNodeInput, { ...base, traffic_multiplier: -1 })).toHaveProperty('traffic_multiplier');
    expect(inputErrors(CreateNodeInput, { ...base, traffic_multiplier: 100.5 })).toHaveProperty('traffic_multiplier');
    expect(inputErrors(CreateNodeInput, { ...base, traffic_multiplier: 0.00001 })).toEqual({
      traffic_multiplier: 'at most 4 decimal places',
    });
    expect(inputErrors(CreateNodeInput, { ...base, traffic_multiplier: '2' })).toHaveProperty('traffic_multiplier');
    expect(inputErrors(UpdateNodeInput, { traffic_quota_bytes: -1 })).toHaveProperty('traffic_quota_bytes');
    expect(inputErrors(UpdateNodeInput, { traffic_quota_bytes: 1.5 })).toHaveProperty('traffic_quota_bytes');
    expect(inputErrors(UpdateNodeInput, { traffic_quota_bytes: 2 ** 60 })).toHaveProperty('traffic_quota_bytes');
    expect(inputErrors(UpdateNodeInput, { traffic_quota_renewal: 'year' })).toHaveProperty('traffic_quota_renewal');
    expect(inputErrors(UpdateNodeInput, { traffic_multiplier: 0.1234, traffic_quota_bytes: null, traffic_quota_renewal: 'week' })).toEqual(
      {},
    );
  });

  it('a node is created with its multiplier and quota (defaults 1, none, month), audited with what was given', async () => {
    const plain = await t.f.node();
    expect(plain).toMatchObject({ traffic_multiplier: 1, traffic_quota_bytes: null, traffic_quota_renewal: 'month' });
    expect(plain.traffic).toMatchObject({ period_bytes: 0, limited_since: null, period_started_at: t.bed.clock.now().toISOString() });
    const priced = await createNode(
      t.bed.ctx(),
      parseInput(CreateNodeInput, {
        name: uniqueName('node'),
        address: 'priced.example.net',
        traffic_multiplier: 2.5,
        traffic_quota_bytes: 10 * 2 ** 30,
        traffic_quota_renewal: 'week',
      }),
    );
    expect(priced).toMatchObject({ traffic_multiplier: 2.5, traffic_quota_bytes: 10 * 2 ** 30, traffic_quota_renewal: 'week' });
    expect((await auditOf(t.bed, priced.id))[0]?.details).toMatchObject({
      traffic_multiplier: 2.5,
      traffic_quota_bytes: 10 * 2 ** 30,
      traffic_quota_renewal: 'week',
    });
  });
});

describe('a node’s traffic quota', () => {
  /** The tags of the inbounds in the node's desired state, and its revision. */
  const desired = async (node: string) => {
    const state = await compileDesiredState(t.bed.deps, node);
    return {
      revision: state?.revision,
      tags: (state?.config.xray?.inbounds ?? []).map((i) => i.tag).filter((tag) => !tag.startsWith('api')),
    };
  };
  const linkServers = async (link: string) =>
    ((await readSubscriptionDocument(t.bed.ctx(), tokenOf(link)))?.servers ?? []).map((s) => s.port);

  it('a node whose period usage reaches its quota is limited: its inbounds leave its desired state and every link, one new revision, audited', async () => {
    const { node, inbounds, sub } = await nodeWithSubscriber({ traffic_quota_bytes: 10_000, traffic_multiplier: 0.5 });
    const inbound = await t.bed.deps.db
      .selectFrom('inbounds')
      .select(['tag', 'port'])
      .where('id', '=', inbounds[0] as string)
      .executeTakeFirstOrThrow();
    expect((await desired(node)).tags).toContain(inbound.tag);
    expect(await linkServers(sub.link)).toEqual([inbound.port]);

    // Under the quota: nothing changes (the quota counts raw bytes, not the charged half).
    const under = await bumpsOf(t.bed, [node], () =>
      ingestUsageReport(t.bed.deps, node, { report_id: 1n, entries: [entry(sub.id, 6_000)] }),
    );
    expect(under).toEqual({ [node]: 0 });
    expect((await getNode(t.bed.ctx(), node)).traffic).toMatchObject({ period_bytes: 6_000, limited_since: null });

    const reached = await bumpsOf(t.bed, [node], () =>
      ingestUsageReport(t.bed.deps, node, { report_id: 2n, entries: [entry(sub.id, 0, 4_000)] }),
    );
    expect(reached).toEqual({ [node]: 1 });
    const view = await getNode(t.bed.ctx(), node);
    expect(view.traffic).toMatchObject({ period_bytes: 10_000, limited_since: t.bed.clock.now().toISOString() });
    expect((await desired(node)).tags).not.toContain(inbound.tag);
    expect(await linkServers(sub.link)).toEqual([]);
    const audit = (await auditOf(t.bed, node)).filter((a) => a.action === 'node.traffic_limited');
    expect(audit).toMatchObject([{ actor_type: 'system', details: { period_bytes: 10_000, quota_bytes: 10_000 } }]);
    // Usage the node still reports (counted before its agent applied the new revision) is credited, and limits nothing twice.
    const late = await bumpsOf(t.bed, [node], () => ingestUsageReport(t.bed.deps, node, { report_id: 3n, entries: [entry(sub.id, 100)] }));
    expect(late).toEqual({ [node]: 0 });
    expect(Number((await subRow(sub.id)).used_bytes)).toBe(5_050);
  });

  it('a limited node comes back when its period resets (the sweep after the boundary), audited; a node without a quota just starts counting again', async () => {
    t.bed.clock.set(new Date('2027-03-10T12:00:00Z'));
    const { node, inbounds, sub } = await nodeWithSubscriber({ traffic_quota_bytes: 1_000, traffic_quota_renewal: 'day' });
    const free = await servedNode(t.bed.ctx());
    const freeSub = await t.f.subscription({ access_group_ids: free.groups });
    await ingestUsageReport(t.bed.deps, node, { report_id: 1n, entries: [entry(sub.id, 1_500)] });
    await ingestUsageReport(t.bed.deps, free.node, { report_id: 1n, entries: [entry(freeSub.id, 1_500)] });
    expect((await getNode(t.bed.ctx(), node)).traffic).toMatchObject({
      limited_since: '2027-03-10T12:00:00.000Z',
      resets_at: '2027-03-11T00:00:00.000Z',
    });
    const port = (
      await t.bed.deps.db
        .selectFrom('inbounds')
        .select('port')
        .where('id', '=', inbounds[0] as string)
        .executeTakeFirstOrThrow()
    ).port;
    expect(await linkServers(sub.link)).toEqual([]);

    // Before the boundary the sweep changes nothing.
    t.bed.clock.set(new Date('2027-03-10T23:59:59Z'));
    expect(await bumpsOf(t.bed, [node], () => sweepNodeTrafficPeriods(t.bed.ctx()))).toEqual({ [node]: 0 });

    t.bed.clock.set(new Date('2027-03-11T00:00:30Z'));
    const before = await revisionsOf(t.bed, [node]);
    const swept = await sweepNodeTrafficPeriods(t.bed.ctx());
    expect(swept.lifted).toBeGreaterThanOrEqual(1);
    expect(await revisionsOf(t.bed, [node])).toEqual({ [node]: (before[node] as number) + 1 });
    expect((await getNode(t.bed.ctx(), node)).traffic).toMatchObject({
      period_bytes: 0,
      period_started_at: '2027-03-11T00:00:00.000Z',
      resets_at: '2027-03-12T00:00:00.000Z',
      limited_since: null,
    });
    expect(await linkServers(sub.link)).toEqual([port]);
    expect((await desired(node)).tags.length).toBe(1);
    expect((await auditOf(t.bed, node)).map((a) => a.action).slice(-2)).toEqual(['node.traffic_period_reset', 'node.traffic_limit_lifted']);
    // The node without a quota (renewal month) started no new period at a day's boundary; the sweep again changes nothing.
    expect((await getNode(t.bed.ctx(), free.node)).traffic.period_bytes).toBe(1_500);
    expect(await bumpsOf(t.bed, [node, free.node], () => sweepNodeTrafficPeriods(t.bed.ctx()))).toEqual({ [node]: 0, [free.node]: 0 });
    t.bed.clock.set(new Date('2027-04-01T00:00:01Z'));
    await sweepNodeTrafficPeriods(t.bed.ctx());
    expect((await getNode(t.bed.ctx(), free.node)).traffic).toMatchObject({
      period_bytes: 0,
      period_started_at: '2027-04-01T00:00:00.000Z',
    });
    expect((await auditOf(t.bed, free.node)).map((a) => a.action)).not.toContain('node.traffic_period_reset');
  });

  it('raising the quota above the period usage, or removing it, brings the node back at once; lowering it to the usage limits it at once', async () => {
    const { node, sub } = await nodeWithSubscriber({ traffic_quota_bytes: 1_000, traffic_quota_renewal: 'no_reset' });
    await ingestUsageReport(t.bed.deps, node, { report_id: 1n, entries: [entry(sub.id, 2_000)] });
    expect((await getNode(t.bed.ctx(), node)).traffic.limited_since).not.toBeNull();
    expect((await getNode(t.bed.ctx(), node)).traffic.resets_at).toBeNull();

    // Raised, but not above what it carried: still limited, nothing bumped.
    expect(await bumpsOf(t.bed, [node], () => patch(node, { traffic_quota_bytes: 2_000 }))).toEqual({ [node]: 0 });
    expect((await getNode(t.bed.ctx(), node)).traffic.limited_since).not.toBeNull();

    let view: Awaited<ReturnType<typeof patch>> | undefined;
    expect(
      await bumpsOf(t.bed, [node], async () => {
        view = await patch(node, { traffic_quota_bytes: 5_000 });
      }),
    ).toEqual({ [node]: 1 });
    expect(view?.traffic.limited_since).toBeNull();
    expect(await linkServers(sub.link)).toHaveLength(1);

    expect(await bumpsOf(t.bed, [node], () => patch(node, { traffic_quota_bytes: 2_000 }))).toEqual({ [node]: 1 });
    expect((await getNode(t.bed.ctx(), node)).traffic.limited_since).not.toBeNull();
    expect(await linkServers(sub.link)).toEqual([]);

    expect(await bumpsOf(t.bed, [node], () => patch(node, { traffic_quota_bytes: null }))).toEqual({ [node]: 1 });
    expect((await getNode(t.bed.ctx(), node)).traffic.limited_since).toBeNull();
    const actions = (await auditOf(t.bed, node)).map((a) => a.action).filter((a) => a.startsWith('node.traffic'));
    expect(actions).toEqual(['node.traffic_limited', 'node.traffic_limit_lifted', 'node.traffic_limited', 'node.traffic_limit_lifted']);
    const changed = (await auditOf(t.bed, node)).filter((a) => a.action === 'node.updated').at(-1);
    expect(changed?.details).toMatchObject({ changed: ['traffic_quota_bytes'], traffic_quota_bytes: { from: 2_000, to: null } });
  });

  it('a quota of 0 limits a node at once, from its creation', async () => {
    const node = await createNode(
      t.bed.ctx(),
      parseInput(CreateNodeInput, { name: uniqueName('node'), address: 'zero.example.net', traffic_quota_bytes: 0 }),
    );
    expect(node.traffic.limited_since).toBe(t.bed.clock.now().toISOString());
  });
});

import {
  ClientBulkInput,
  getBulkJob,
  ingestUsageReport,
  parseInput,
  queueClientBulk,
  queueSubscriptionBulk,
  requeueStaleBulkJobs,
  runBulkJob,
  SubscriptionBulkInput,
  subscriptionsWithCounters,
} from '@svc/domain';
import { cloneSubscriptions, uniqueName } from '@svc/testkit';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { servedNode } from '../customers-support.ts';
import { fileTestbed, inputErrors, revisionsOf } from '../support.ts';

// Issue 35.3: bulk actions over subscriptions and clients, as jobs: the ids written down when the
// job is made, a chunk per transaction, each subject changed once however often the job runs,
// audited per subject, one revision per node for the whole job.

const t = fileTestbed();
const DAY = 86_400_000;

const subs = (input: Record<string, unknown>) => queueSubscriptionBulk(t.bed.ctx(), parseInput(SubscriptionBulkInput, input));
const clients = (input: Record<string, unknown>) => queueClientBulk(t.bed.ctx(), parseInput(ClientBulkInput, input));
const job = async (input: Record<string, unknown>) => {
  const queued = await subs(input);
  if ('dry_run' in queued) throw new Error('a job was expected');
  return queued;
};
const rows = (ids: readonly string[]) => subscriptionsWithCounters(t.bed.deps.db).where('id', 'in', ids).orderBy('id').execute();
const countOf = async (query: ReturnType<typeof sql<{ n: number }>>) => (await query.execute(t.bed.deps.db)).rows[0]?.n ?? 0;
const eventsOf = (type: string, ids: readonly string[]) =>
  countOf(
    sql<{ n: number }>`select count(*)::int as n from events where type = ${type} and payload->>'subscription_id' = any(${ids}::text[])`,
  );
const auditsOf = (action: string, ids: readonly string[]) =>
  countOf(sql<{ n: number }>`select count(*)::int as n from audit_log where action = ${action} and entity_id = any(${ids}::text[])`);

/** Two nodes, and `n` subscriptions split between them (half on each), noted with a tag a filter finds. */
async function population(n: number, fields: Record<string, unknown> = {}) {
  const a = await servedNode(t.bed.ctx());
  const b = await servedNode(t.bed.ctx());
  const note = uniqueName('bulk');
  const onA = await t.f.subscription({ access_group_ids: a.groups, note, ...fields });
  const onB = await t.f.subscription({ access_group_ids: b.groups, note, ...fields });
  const half = Math.floor(n / 2);
  const ids = [
    onA.id,
    onB.id,
    ...(await cloneSubscriptions(t.bed.deps.db, onA.id, half - 1)),
    ...(await cloneSubscriptions(t.bed.deps.db, onB.id, n - half - 1)),
  ].sort();
  /** Some of each node's subscriptions expired already (the expiry sweep wrote it): an extension brings them back on the nodes. */
  const expireSome = async (per: number) => {
    const expired = [
      ...ids.filter((id) => id.startsWith(onA.id)).slice(0, per),
      ...ids.filter((id) => id.startsWith(onB.id)).slice(0, per),
    ];
    const past = new Date(t.bed.clock.now().getTime() - DAY);
    await t.bed.deps.db.updateTable('subscriptions').set({ expires_at: past, status: 'expired' }).where('id', 'in', expired).execute();
    return expired;
  };
  return { nodes: [a.node, b.node], ids, note, expireSome };
}

describe('bulk actions over subscriptions', () => {
  it('a dry run answers how many and a sample, and changes nothing', async () => {
    const { ids, note } = await population(12, { expires_at: new Date(t.bed.clock.now().getTime() + DAY) });
    const before = await rows(ids);
    const dry = await subs({ filter: { q: note }, action: { type: 'delete' }, dry_run: true });
    expect(dry).toMatchObject({ dry_run: true, count: 12 });
    expect('sample' in dry && dry.sample.map((s) => s.id)).toEqual(ids.slice(0, 5));
    expect(await rows(ids)).toEqual(before);
    expect(await t.bed.deps.db.selectFrom('bulk_jobs').select('id').execute()).toEqual([]);
  });

  it('a bulk extend of 10,000 over a filter runs a chunk at a time with progress: each subscription extended once, audited, one revision per node for the whole job', async () => {
    const now = t.bed.clock.now();
    const { nodes, ids, note, expireSome } = await population(10_000, { expires_at: new Date(now.getTime() + DAY) });
    const expired = await expireSome(15);
    const revisions = await revisionsOf(t.bed, nodes);

    const queued = await job({ filter: { q: note }, action: { type: 'extend_expiry', days: 30 } });
    expect(queued).toMatchObject({ status: 'queued', total: 10_000, done: 0, target: 'subscriptions' });
    const progress: number[] = [];
    const done = await runBulkJob(t.bed.deps, queued.id, {
      afterChunk: async () => {
        progress.push((await getBulkJob(t.bed.ctx(), queued.id)).done);
        // No node hears of the job before it ends.
        expect(await revisionsOf(t.bed, nodes)).toEqual(revisions);
      },
    });
    expect(progress).toEqual(Array.from({ length: 20 }, (_, i) => (i + 1) * 500));
    expect(done).toMatchObject({ status: 'done', total: 10_000, done: 10_000, skipped: 0 });
    const after = await rows(ids);
    const expect30 = (from: number) => new Date(from + 30 * DAY).toISOString();
    for (const r of after)
      expect(r.expires_at?.toISOString(), r.id).toBe(expired.includes(r.id) ? expect30(now.getTime()) : expect30(now.getTime() + DAY));
    expect(after.every((r) => r.status === 'active')).toBe(true);
    expect(await revisionsOf(t.bed, nodes)).toEqual(Object.fromEntries(nodes.map((n) => [n, (revisions[n] as number) + 1])));
    expect(await auditsOf('subscription.bulk_extend_expiry', ids)).toBe(10_000);
    expect(await eventsOf('subscription.renewed', ids)).toBe(10_000);
    expect(await eventsOf('subscription.updated', ids)).toBe(10_000);
    // Run again (a duplicate job delivery): nothing more happens.
    await runBulkJob(t.bed.deps, queued.id);
    expect((await rows(ids)).map((r) => r.expires_at?.toISOString())).toEqual(after.map((r) => r.expires_at?.toISOString()));
    expect(await revisionsOf(t.bed, nodes)).toEqual(Object.fromEntries(nodes.map((n) => [n, (revisions[n] as number) + 1])));
  });

  it('a job whose worker died mid-way is resumed by the sweep and applies each subscription exactly once', async () => {
    const now = t.bed.clock.now();
    const { nodes, ids, note, expireSome } = await population(1_100, { expires_at: new Date(now.getTime() + DAY) });
    const expired = await expireSome(5);
    const revisions = await revisionsOf(t.bed, nodes);
    const queued = await job({ filter: { q: note }, action: { type: 'extend_expiry', days: 7 } });
    let chunks = 0;
    const died = await runBulkJob(t.bed.deps, queued.id, {
      chunk: 200,
      afterChunk: async () => {
        if (++chunks === 3) throw new Error('the worker died');
      },
    }).catch((err: Error) => err.message);
    expect(died).toBe('the worker died');
    expect(await getBulkJob(t.bed.ctx(), queued.id)).toMatchObject({ status: 'running', done: 600 });
    // The sweep finds it silent (its worker gone) and hands it to the queue again.
    t.bed.clock.advance(3 * 60_000);
    const enqueued: string[] = [];
    const jobs = { enqueue: async (_name: string, data: { id: string }) => void enqueued.push(data.id) };
    expect(await requeueStaleBulkJobs({ ...t.bed.ctx(), jobs } as never)).toBeGreaterThanOrEqual(1);
    expect(enqueued).toContain(queued.id);
    expect(await runBulkJob(t.bed.deps, queued.id)).toMatchObject({ status: 'done', done: 1_100 });
    const extended = (id: string) => new Date(now.getTime() + (expired.includes(id) ? 7 : 8) * DAY).toISOString();
    expect((await rows(ids)).filter((r) => r.expires_at?.toISOString() !== extended(r.id))).toEqual([]);
    expect(await auditsOf('subscription.bulk_extend_expiry', ids)).toBe(1_100);
    expect(await revisionsOf(t.bed, nodes)).toEqual(Object.fromEntries(nodes.map((n) => [n, (revisions[n] as number) + 1])));
  });

  it('traffic, usage, status, groups, credentials and delete: each by the single verbs’ rules, with their events', async () => {
    const { nodes, ids, note } = await population(6, { traffic_limit_bytes: 1_000 });
    await t.bed.deps.db.updateTable('subscription_counters').set({ used_bytes: 900 }).where('subscription_id', 'in', ids).execute();
    const run = async (action: Record<string, unknown>, selection: Record<string, unknown> = { filter: { q: note } }) =>
      runBulkJob(t.bed.deps, (await job({ ...selection, action })).id);

    await run({ type: 'add_traffic', bytes: 500 });
    expect((await rows(ids)).map((r) => Number(r.traffic_limit_bytes))).toEqual(ids.map(() => 1_500));
    await run({ type: 'set_traffic', traffic_limit_bytes: 800 });
    expect((await rows(ids)).map((r) => r.status)).toEqual(ids.map(() => 'limited'));
    expect(await eventsOf('subscription.limited', ids)).toBe(6);
    await run({ type: 'reset_usage' });
    expect((await rows(ids)).map((r) => [Number(r.used_bytes), r.status])).toEqual(ids.map(() => [0, 'active']));
    await run({ type: 'set_status', status: 'disabled' }, { ids: ids.slice(0, 2) });
    expect(await eventsOf('subscription.disabled', ids)).toBe(2);

    const revisions = await revisionsOf(t.bed, nodes);
    const target = await servedNode(t.bed.ctx());
    await run({ type: 'set_access_groups', access_group_ids: target.groups });
    const groups = await t.bed.deps.db
      .selectFrom('subscription_access_groups')
      .select('access_group_id')
      .where('subscription_id', 'in', ids)
      .execute();
    expect(new Set(groups.map((g) => g.access_group_id))).toEqual(new Set(target.groups));
    // The nodes they left and the node they joined: one revision each.
    expect(await revisionsOf(t.bed, nodes)).toEqual(Object.fromEntries(nodes.map((n) => [n, (revisions[n] as number) + 1])));

    const tokens = (await rows(ids)).map((r) => r.token_hash);
    await run({ type: 'rotate_credentials' });
    const rotated = await rows(ids);
    expect(rotated.every((r, i) => r.token_hash !== tokens[i] && r.credentials_rotated_at !== null)).toBe(true);
    expect(await eventsOf('subscription.credentials_rotated', ids)).toBe(6);

    // Their traffic on the node they joined: hourly rows that the delete takes with them.
    await ingestUsageReport(t.bed.deps, target.node, {
      report_id: 1n,
      entries: ids.map((id) => ({ subscription_id: id, uplink_bytes: 1n, downlink_bytes: 1n })),
    });
    const hourly = () => t.bed.deps.db.selectFrom('usage_hourly').select('subscription_id').where('subscription_id', 'in', ids).execute();
    expect(await hourly()).toHaveLength(6);
    const deleted = await run({ type: 'delete' }, { ids: [...ids, 'sub_nothere'] });
    expect(deleted).toMatchObject({ status: 'done', total: 6, done: 6 });
    expect(await rows(ids)).toEqual([]);
    expect(await hourly()).toEqual([]);
    expect(await eventsOf('subscription.deleted', ids)).toBe(6);
  });

  it('a subscription deleted after the job was made is skipped and counted', async () => {
    const { ids } = await population(4);
    const queued = await job({ ids, action: { type: 'reset_usage' } });
    await t.bed.deps.db
      .deleteFrom('subscriptions')
      .where('id', '=', ids[0] as string)
      .execute();
    expect(await runBulkJob(t.bed.deps, queued.id)).toMatchObject({ status: 'done', total: 4, done: 4, skipped: 1 });
  });

  it('input: ids or a filter (not both, not neither), known access groups, a known action; refused naming the field', async () => {
    expect(inputErrors(SubscriptionBulkInput, { action: { type: 'reset_usage' } })).toHaveProperty('ids');
    expect(inputErrors(SubscriptionBulkInput, { ids: ['sub_x'], filter: {}, action: { type: 'reset_usage' } })).toHaveProperty('ids');
    expect(inputErrors(SubscriptionBulkInput, { filter: {}, action: { type: 'explode' } })).toHaveProperty(['action.type']);
    expect(inputErrors(SubscriptionBulkInput, { filter: {}, action: { type: 'extend_expiry', days: 0 } })).toHaveProperty(['action.days']);
    expect(inputErrors(SubscriptionBulkInput, { filter: { status: 'weird' }, action: { type: 'reset_usage' } })).toHaveProperty([
      'filter.status',
    ]);
    await expect(subs({ filter: {}, action: { type: 'set_access_groups', access_group_ids: ['grp_nothere'] } })).rejects.toMatchObject({
      type: 'validation',
    });
  });
});

describe('bulk actions over clients', () => {
  it('approve takes pending clients and skips those the state machine does not allow; delete skips clients with subscriptions', async () => {
    const pending = [await t.f.client({ status: 'pending' }), await t.f.client({ status: 'pending' })];
    const active = await t.f.client();
    const queued = await clients({ ids: [...pending.map((c) => c.id), active.id], action: { type: 'approve' } });
    if ('dry_run' in queued) throw new Error('a job was expected');
    expect(await runBulkJob(t.bed.deps, queued.id)).toMatchObject({ status: 'done', total: 3, done: 3, skipped: 1 });
    const statuses = await t.bed.deps.db
      .selectFrom('clients')
      .select(['id', 'status'])
      .where(
        'id',
        'in',
        pending.map((c) => c.id),
      )
      .execute();
    expect(statuses.every((c) => c.status === 'active')).toBe(true);
    const approved = await countOf(
      sql<{
        n: number;
      }>`select count(*)::int as n from events where type = 'client.approved' and payload->>'client_id' = any(${pending.map((c) => c.id)}::text[])`,
    );
    expect(approved).toBe(2);

    const withSub = await t.f.client();
    await t.f.subscription({ client_id: withSub.id });
    const gone = await clients({ ids: [withSub.id, active.id], action: { type: 'delete' } });
    if ('dry_run' in gone) throw new Error('a job was expected');
    expect(await runBulkJob(t.bed.deps, gone.id)).toMatchObject({ done: 2, skipped: 1 });
    const left = await t.bed.deps.db.selectFrom('clients').select('id').where('id', 'in', [withSub.id, active.id]).execute();
    expect(left.map((c) => c.id)).toEqual([withSub.id]);
  });
});

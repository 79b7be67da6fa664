import {
  foldUsageInbox,
  JOBS,
  parseInput,
  stageUsageReport,
  subscriptionsWithCounters,
  UpdateSubscriptionInput,
  USAGE_PARTS,
  updateSubscription,
  usageInboxBacklog,
  usagePart,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures, testDatabaseUrl } from '@svc/testkit';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedNode } from '../customers-support.ts';

// Issue 37.1: the gateway stages a usage report (one row, the node's last report id moved:
// exactly once per report id) and acknowledges it; the fold credits what is staged with the
// ingest's crediting rule and removes it, in one transaction.

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
  bed.clock.set(new Date('2026-06-01T10:15:00Z'));
  // a limit reached on a row an edit holds goes to the worker: consumed, so the queue does not hold it.
  await bed.deps.jobs.consume(JOBS.enforceLimits, async () => {});
});
afterAll(() => bed.close());

const entry = (subscription_id: string, up: number, down = 0) => ({
  subscription_id,
  uplink_bytes: BigInt(up),
  downlink_bytes: BigInt(down),
});
const sub = (id: string) => subscriptionsWithCounters(bed.deps.db).where('id', '=', id).executeTakeFirstOrThrow();
const hourly = (id: string) =>
  bed.deps.db
    .selectFrom('usage_hourly')
    .select(['node_id', 'hour', 'uplink_bytes', 'downlink_bytes', 'raw_uplink_bytes', 'raw_downlink_bytes'])
    .where('subscription_id', '=', id)
    .orderBy('hour')
    .execute();
const nodeRow = (id: string) => bed.deps.db.selectFrom('nodes').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
/** Folds until nothing is staged (the tests' folds never meet another one). */
async function foldAll(maxEntries?: number) {
  const results = [];
  for (;;) {
    const r = await foldUsageInbox(bed.deps, maxEntries ? { maxEntries } : {});
    if (!r) throw new Error('another fold held the lock');
    results.push(r);
    if (r.left === 0) return results;
  }
}
async function served(count: number) {
  const { node, groups } = await servedNode(bed.ctx());
  const f = fixtures(bed.ctx());
  const subs: string[] = [];
  for (let i = 0; i < count; i++) subs.push((await f.subscription({ access_group_ids: groups })).id);
  return { node, groups, subs };
}

/** Two subscriptions whose entries stage into the same part. */
function twoOfOnePart(ids: readonly string[]): [string, string] {
  for (const a of ids) {
    const b = ids.find((x) => x !== a && usagePart(x) === usagePart(a));
    if (b) return [a, b];
  }
  throw new Error('no two ids share a part');
}

describe('stageUsageReport: exactly once per node by report_id', () => {
  it('a staged report moves the node’s last id and credits nothing until the fold; a replay and an older id stage nothing', async () => {
    const { node, subs } = await served(1);
    const a = subs[0] as string;
    expect(await stageUsageReport(bed.deps, node, { report_id: 5n, entries: [entry(a, 10, 20)] })).toEqual({
      report_id: 5n,
      applied: true,
      staged: 1,
      invalid: 0,
    });
    expect(Number((await nodeRow(node)).last_usage_report_id)).toBe(5);
    expect(Number((await sub(a)).used_bytes)).toBe(0);
    for (const id of [5n, 3n])
      expect(await stageUsageReport(bed.deps, node, { report_id: id, entries: [entry(a, 999)] })).toMatchObject({
        applied: false,
        staged: 0,
      });
    expect(await usageInboxBacklog(bed.deps)).toMatchObject({ entries: 1 });
    await foldAll();
    expect(Number((await sub(a)).used_bytes)).toBe(30);
    expect(await usageInboxBacklog(bed.deps)).toEqual({ entries: 0, oldest_ms: 0 });
    // Folded once: a fold with nothing staged changes nothing.
    expect(await foldUsageInbox(bed.deps)).toEqual({
      reports: 0,
      entries: 0,
      credited: 0,
      uncredited: 0,
      uncredited_by_node: [],
      left: 0,
      oldest_ms: 0,
    });
    expect(Number((await sub(a)).used_bytes)).toBe(30);
  });

  it('invalid entries are dropped and counted on the node at staging; entries of a subscription not served are dropped and counted by the fold', async () => {
    const { node, subs } = await served(1);
    const a = subs[0] as string;
    const stranger = (await fixtures(bed.ctx()).subscription()).id;
    const r = await stageUsageReport(bed.deps, node, {
      report_id: 1n,
      entries: [entry(a, 7), entry('sub_\u0000', 1), entry('', 1), entry(stranger, 50), { ...entry(a, 0), uplink_bytes: -1n }],
    });
    expect(r).toMatchObject({ applied: true, staged: 2, invalid: 3 });
    expect(Number((await nodeRow(node)).usage_entries_dropped)).toBe(3);
    const [fold] = await foldAll();
    expect(fold).toMatchObject({ reports: 1, entries: 2, credited: 1, uncredited: 1, uncredited_by_node: [{ node_id: node, entries: 1 }] });
    expect(Number((await nodeRow(node)).usage_entries_dropped)).toBe(4);
    expect(Number((await sub(a)).used_bytes)).toBe(7);
    expect(Number((await sub(stranger)).used_bytes)).toBe(0);
  });
  it('ids with the array syntax’s specials (quotes, backslashes, commas, braces, NULL) are staged as sent: each keeps its own bytes and the served subscriptions after them theirs', async () => {
    const { node, subs } = await served(2);
    const [a, b] = subs as [string, string];
    const hostile = ['a"b', 'c\\d', '"', '\\', 'e,f', '{g}', 'NULL', ' h ', '},{', 'i\\"j', '日本', '🚀'];
    const entries = [entry(a, 3, 1), ...hostile.map((id, i) => entry(id, 100 + i)), entry(b, 5, 2)];
    const r = await stageUsageReport(bed.deps, node, { report_id: 1n, entries });
    expect(r).toMatchObject({ applied: true, staged: hostile.length + 2, invalid: 0 });
    const staged = await bed.deps.db.selectFrom('usage_inbox').select(['ids', 'uplink', 'downlink']).where('node_id', '=', node).execute();
    const got = new Map(staged.flatMap((row) => row.ids.map((id, i) => [id, [Number(row.uplink[i]), Number(row.downlink[i])]] as const)));
    expect(got).toEqual(new Map(entries.map((e) => [e.subscription_id, [Number(e.uplink_bytes), Number(e.downlink_bytes)]])));
    const [fold] = await foldAll();
    expect(fold).toMatchObject({ credited: 2, uncredited: hostile.length });
    expect([Number((await sub(a)).used_bytes), Number((await sub(b)).used_bytes)]).toEqual([4, 7]);
  });
});

describe('foldUsageInbox: what is staged, credited once with the ingest’s rule', () => {
  it('reports of several nodes staged together: each subscription credited the sum of its entries, one hourly row per node, one write per subscription', async () => {
    const x = await served(3);
    const y = await served(2);
    for (let r = 1; r <= 4; r++) {
      await stageUsageReport(bed.deps, x.node, { report_id: BigInt(r), entries: x.subs.map((s, i) => entry(s, r * 10 + i, 1)) });
      await stageUsageReport(bed.deps, y.node, { report_id: BigInt(r), entries: y.subs.map((s) => entry(s, 100)) });
    }
    const [fold] = await foldAll();
    // 8 reports, 20 entries, 5 subscriptions: 5 credits.
    expect(fold).toMatchObject({ reports: 8, entries: 20, credited: 5, uncredited: 0, left: 0 });
    for (const [i, s] of x.subs.entries()) {
      const up = [1, 2, 3, 4].reduce((t, r) => t + r * 10 + i, 0);
      expect(Number((await sub(s)).used_bytes)).toBe(up + 4);
      expect((await hourly(s)).map((h) => [h.node_id, Number(h.uplink_bytes), Number(h.downlink_bytes)])).toEqual([[x.node, up, 4]]);
    }
    for (const s of y.subs) expect(Number((await sub(s)).lifetime_used_bytes)).toBe(400);
    const nx = await nodeRow(x.node);
    expect([Number(nx.traffic_raw_bytes), Number(nx.traffic_charged_bytes), Number(nx.last_usage_report_id)]).toEqual([
      (10 + 20 + 30 + 40) * 3 + 3 * 4 + 12,
      (10 + 20 + 30 + 40) * 3 + 3 * 4 + 12,
      4,
    ]);
  });

  it('a report is charged at the multiplier its node had when it arrived and lands in the hour it arrived', async () => {
    const { node, subs } = await served(1);
    const a = subs[0] as string;
    const h0 = bed.clock.now();
    await stageUsageReport(bed.deps, node, { report_id: 1n, entries: [entry(a, 100, 10)] });
    await bed.deps.db.updateTable('nodes').set({ traffic_multiplier: '2' }).where('id', '=', node).execute();
    bed.clock.advance(3600_000);
    await stageUsageReport(bed.deps, node, { report_id: 2n, entries: [entry(a, 1000, 100)] });
    bed.clock.advance(60_000);
    await foldAll();
    const hour = (d: Date) => new Date(Math.floor(d.getTime() / 3600_000) * 3600_000);
    expect(
      (await hourly(a)).map((h) => [
        h.hour,
        Number(h.uplink_bytes),
        Number(h.downlink_bytes),
        Number(h.raw_uplink_bytes),
        Number(h.raw_downlink_bytes),
      ]),
    ).toEqual([
      [hour(h0), 100, 10, 100, 10],
      [hour(new Date(h0.getTime() + 3600_000)), 2000, 200, 1000, 100],
    ]);
    expect(Number((await sub(a)).used_bytes)).toBe(110 + 2200);
  });

  it('a term that starts on first use starts when the report arrived, not when it was folded', async () => {
    const { node, subs } = await served(1);
    const a = subs[0] as string;
    await bed.deps.db
      .updateTable('subscriptions')
      .set({ starts_on_first_use_seconds: 86_400, expires_at: null })
      .where('id', '=', a)
      .execute();
    const arrived = bed.clock.now();
    await stageUsageReport(bed.deps, node, { report_id: 1n, entries: [entry(a, 1)] });
    bed.clock.advance(600_000);
    await foldAll();
    const s = await sub(a);
    expect(s.starts_on_first_use_seconds).toBeNull();
    expect(s.expires_at?.getTime()).toBe(arrived.getTime() + 86_400_000);
  });

  it('crossing 80% and 100% of a limit over several staged reports raises each event once, and the fold stores the subscription limited', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const a = (await fixtures(bed.ctx()).subscription({ access_group_ids: groups, traffic_limit_bytes: 1000 })).id;
    for (const [r, bytes] of [
      [1n, 300],
      [2n, 300],
      [3n, 300],
      [4n, 300],
    ] as const)
      await stageUsageReport(bed.deps, node, { report_id: r, entries: [entry(a, bytes)] });
    await foldAll();
    expect(await sub(a)).toMatchObject({ used_bytes: 1200, status: 'limited' });
    const { rows } = await sql<{ type: string }>`
      select type from events where payload->>'subscription_id' = ${a} and type like 'subscription.traffic_%' order by type`.execute(
      bed.deps.db,
    );
    expect(rows.map((r) => r.type)).toEqual(['subscription.traffic_100_percent', 'subscription.traffic_80_percent']);
  });

  it('takes the oldest rows of a part up to maxEntries (at least one) and leaves the rest for the next fold', async () => {
    // Two subscriptions of one part (17 subscriptions hold two of some part of 16).
    const { node, subs: all } = await served(USAGE_PARTS + 1);
    const subs = twoOfOnePart(all);
    for (let r = 1; r <= 3; r++) {
      await stageUsageReport(bed.deps, node, { report_id: BigInt(r), entries: subs.map((s) => entry(s, r)) });
      bed.clock.advance(10_000);
    }
    const folds = await foldAll(2);
    // 2 entries a report: the first fold takes report 1 only (report 2 would start at 2), and so
    // on; what is left has waited since its report arrived (reports 10 s apart, folded 10 s after the last).
    expect(folds.map((f) => [f.reports, f.entries, f.left, f.oldest_ms])).toEqual([
      [1, 2, 4, 20_000],
      [1, 2, 2, 10_000],
      [1, 2, 0, 0],
    ]);
    for (const s of subs) expect(Number((await sub(s)).used_bytes)).toBe(6);
  });

  it('a report is staged one row per part it has entries in, each subscription always in its own part', async () => {
    const { node, subs } = await served(40);
    for (let r = 1; r <= 2; r++) await stageUsageReport(bed.deps, node, { report_id: BigInt(r), entries: subs.map((s) => entry(s, r)) });
    const rows = await bed.deps.db
      .selectFrom('usage_inbox')
      .select(['report_id', 'part', 'ids', 'entries'])
      .where('node_id', '=', node)
      .orderBy(['report_id', 'part'])
      .execute();
    const parts = new Set(subs.map(usagePart));
    expect(rows).toHaveLength(2 * parts.size);
    for (const row of rows) {
      expect(row.entries).toBe(row.ids.length);
      for (const id of row.ids) expect(usagePart(id)).toBe(row.part);
    }
    expect(rows.flatMap((r) => r.ids).sort()).toEqual([...subs, ...subs].sort());
    await foldAll();
    for (const s of subs) expect(Number((await sub(s)).used_bytes)).toBe(3);
  });

  it('the parts share the ids out: every part is used and none takes more than twice its share', () => {
    const ids = Array.from({ length: 1600 }, (_, i) => `sub_01jq${String(i * 7919).padStart(22, '0')}`);
    const counts = Array.from({ length: USAGE_PARTS }, () => 0);
    for (const id of ids) counts[usagePart(id)] = (counts[usagePart(id)] ?? 0) + 1;
    expect(Math.min(...counts)).toBeGreaterThan(0);
    expect(Math.max(...counts)).toBeLessThan((2 * ids.length) / USAGE_PARTS);
  });

  it('a fold that fails credits nothing and leaves every staged report for the next, which credits each once', async () => {
    const { node, subs } = await served(2);
    const [a, b] = subs as [string, string];
    await stageUsageReport(bed.deps, node, { report_id: 1n, entries: [entry(a, 5), entry(b, 6)] });
    await stageUsageReport(bed.deps, node, { report_id: 2n, entries: [entry(a, 5)] });
    // The hourly row of b cannot be written: the fold fails after crediting a.
    await sql`alter table usage_hourly add constraint fold_test_refuses check (subscription_id <> ${sql.lit(b)}) not valid`.execute(
      bed.deps.db,
    );
    try {
      await expect(foldUsageInbox(bed.deps)).rejects.toThrow();
    } finally {
      await sql`alter table usage_hourly drop constraint fold_test_refuses`.execute(bed.deps.db);
    }
    expect([Number((await sub(a)).used_bytes), Number((await sub(b)).used_bytes)]).toEqual([0, 0]);
    expect(await usageInboxBacklog(bed.deps)).toMatchObject({ entries: 3 });
    await foldAll();
    expect([Number((await sub(a)).used_bytes), Number((await sub(b)).used_bytes)]).toEqual([10, 6]);
    expect(await hourly(a)).toHaveLength(1);
  });

  it('absurd sums from a hostile node saturate the counters instead of overflowing: the fold succeeds and the folds after it go on', async () => {
    const { node, subs } = await served(2);
    const [a, b] = subs as [string, string];
    const delta = 2 ** 50; // each entry at the largest delta accepted (1 PiB)
    // Thousands of them for one subscription in each report (4,100 × 2^50 is past 2^62), in reports
    // enough that the fold's sum is past int8, onto counters already near the top.
    const absurd = Array.from({ length: 4_100 }, () => entry(a, delta, delta));
    for (let r = 1; r <= 3; r++) await stageUsageReport(bed.deps, node, { report_id: BigInt(r), entries: absurd });
    const top = String(2n ** 63n - 1n - 2n ** 50n); // int8's largest value, less 2^50
    await sql`update subscription_counters set used_bytes = ${top}, lifetime_used_bytes = ${top} where subscription_id = ${a}`.execute(
      bed.deps.db,
    );
    await stageUsageReport(bed.deps, node, { report_id: 4n, entries: [entry(b, 7)] });
    const folds = await foldAll();
    expect(folds.reduce((t, f) => t + f.credited, 0)).toBe(2);
    const row = await sub(a);
    // Taken at most at 2^59 and added to: well inside int8, and the report's sum cut to 2^50 each way.
    expect(BigInt(row.used_bytes)).toBeGreaterThanOrEqual(2n ** 59n);
    expect(BigInt(row.used_bytes)).toBeLessThan(2n ** 61n);
    expect(BigInt(row.period_uplink_bytes)).toBe(3n * 2n ** 50n);
    expect(Number((await sub(b)).used_bytes)).toBe(7);
    expect(await usageInboxBacklog(bed.deps)).toMatchObject({ entries: 0 });
    // The same node's next report is credited as usual.
    await stageUsageReport(bed.deps, node, { report_id: 5n, entries: [entry(b, 3)] });
    await foldAll();
    expect(Number((await sub(b)).used_bytes)).toBe(10);
  });
});

// Every gateway replica folds, two folds at a time in each; PostgreSQL's per-part lock keeps two
// off the same part of a node. (PGlite: one connection, one statement at a time: nothing to exclude.)
describe.skipIf(!testDatabaseUrl())('one fold at a time per part of a node, across replicas (PostgreSQL)', () => {
  it('a fold finds a part another fold holds and leaves it; the parts nobody holds it credits, of the same node too; the holder’s fold credits the rest', async () => {
    const held = await served(USAGE_PARTS + 1);
    const free = await served(1);
    // Two subscriptions of the held node in different parts: one part held, the other not.
    const a = held.subs[0] as string;
    const c = held.subs.find((s) => usagePart(s) !== usagePart(a)) as string;
    const b = free.subs[0] as string;
    await stageUsageReport(bed.deps, held.node, { report_id: 1n, entries: [entry(a, 9)] });
    await bed.deps.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext('svc.usage-fold'), hashtext(${`${held.node}/${usagePart(a)}`}))`.execute(trx);
      // Only the held part has staged rows: nothing this fold may take.
      expect(await foldUsageInbox(bed.deps)).toBeNull();
      await stageUsageReport(bed.deps, free.node, { report_id: 1n, entries: [entry(b, 4)] });
      await stageUsageReport(bed.deps, held.node, { report_id: 2n, entries: [entry(a, 100), entry(c, 7)] });
      // The free node's part and the held node's other part; report 2's row of the held part stays.
      expect(await foldUsageInbox(bed.deps)).toMatchObject({ reports: 2, entries: 2, credited: 2, left: 2 });
    });
    expect(await Promise.all([a, b, c].map(async (s) => Number((await sub(s)).used_bytes)))).toEqual([0, 4, 7]);
    await foldAll();
    expect(Number((await sub(a)).used_bytes)).toBe(109);
    expect(Number((await nodeRow(held.node)).traffic_raw_bytes)).toBe(116);
  });
});

/** `p` settled within `ms`, or a rejection saying what waited. */
const within = <T>(p: Promise<T>, ms: number, what: string) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} waited ${ms} ms`)), ms))]);

describe.skipIf(!testDatabaseUrl())('a usage credit and an edit of the subscription do not wait on each other (PostgreSQL)', () => {
  it('an edit goes through while a credit holds the counters row; a fold goes through while an edit holds the subscription row', async () => {
    const { node, subs } = await served(1);
    const s = subs[0] as string;
    // A credit in progress: its transaction holds the subscription's counters row.
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let crediting: Promise<void> | undefined;
    const creditHolds = new Promise<void>((holding) => {
      crediting = bed.deps.db.transaction().execute(async (trx) => {
        await sql`update subscription_counters set used_bytes = used_bytes + 5 where subscription_id = ${s}`.execute(trx);
        holding();
        await held;
      });
    });
    await creditHolds;
    try {
      const view = await within(
        updateSubscription(bed.ctx(), s, parseInput(UpdateSubscriptionInput, { note: 'edited during a credit' })),
        5_000,
        'the edit',
      );
      // It read the counters as the last committed credit left them.
      expect(view).toMatchObject({ note: 'edited during a credit', used_bytes: 0 });
    } finally {
      release();
      await crediting;
    }
    expect(Number((await sub(s)).used_bytes)).toBe(5);
    // An edit in progress: its transaction holds the subscription row (as lockSubscription does).
    await stageUsageReport(bed.deps, node, { report_id: 1n, entries: [entry(s, 40)] });
    await bed.deps.db.transaction().execute(async (trx) => {
      await trx.selectFrom('subscriptions').select('id').where('id', '=', s).forUpdate().execute();
      expect(await within(foldUsageInbox(bed.deps), 5_000, 'the fold')).toMatchObject({ credited: 1 });
    });
    expect(Number((await sub(s)).used_bytes)).toBe(45);
  });

  it('a fold that limits a subscription holds no node row while it waits on a counters row (a period reset locks counters, then nodes)', async () => {
    // Node a is credited first (ids grow with time); x, served by a and b, reaches its limit there;
    // then node b's credit waits on y's counters row, which another transaction holds.
    const a = await servedNode(bed.ctx());
    const b = await servedNode(bed.ctx());
    const f = fixtures(bed.ctx());
    const x = (await f.subscription({ access_group_ids: [...a.groups, ...b.groups], traffic_limit_bytes: 100 })).id;
    const y = (await f.subscription({ access_group_ids: b.groups })).id;
    expect(a.node < b.node).toBe(true);
    await stageUsageReport(bed.deps, a.node, { report_id: 1n, entries: [entry(x, 150)] });
    await stageUsageReport(bed.deps, b.node, { report_id: 1n, entries: [entry(y, 10)] });
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let reset: Promise<void> | undefined;
    let xid = '';
    const counterHeld = new Promise<void>((holding) => {
      reset = bed.deps.db.transaction().execute(async (trx) => {
        await sql`select 1 from subscription_counters where subscription_id = ${y} for update`.execute(trx);
        xid = (await sql<{ xid: string }>`select pg_current_xact_id()::text as xid`.execute(trx)).rows[0]?.xid ?? '';
        holding();
        await held;
        // The reset's next step: the nodes. Were any held by the waiting fold, this would deadlock.
        await sql`select 1 from nodes where id in (${a.node}, ${b.node}) order by id for update nowait`.execute(trx);
      });
    });
    await counterHeld;
    const folding = foldUsageInbox(bed.deps);
    // The fold has credited x (limit reached) and waits on y's counters row, that is on the holder's transaction.
    let waiting = false;
    for (let i = 0; i < 250 && !waiting; i++) {
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from pg_locks where locktype = 'transactionid' and not granted and transactionid::text = ${xid}`.execute(
        bed.deps.db,
      );
      waiting = (rows[0]?.n ?? 0) > 0;
      if (!waiting) await new Promise((r) => setTimeout(r, 20));
    }
    expect(waiting, 'the fold waits on the held counters row').toBe(true);
    release();
    await reset;
    expect(await within(folding, 10_000, 'the fold')).toMatchObject({ credited: 2 });
    expect(await sub(x)).toMatchObject({ status: 'limited', used_bytes: 150 });
    expect(Number((await sub(y)).used_bytes)).toBe(10);
  });
});

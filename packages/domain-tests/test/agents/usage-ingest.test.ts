import type { Db } from '@svc/db';
import {
  enforceTrafficLimits,
  ingestUsageReport,
  JOBS,
  parseInput,
  SERVED_GRACE_MS,
  subscriptionsWithCounters,
  UpdateAccessGroupInput,
  UpdateInboundInput,
  UpdateSubscriptionInput,
  updateAccessGroup,
  updateInbound,
  updateSubscription,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures, testDatabaseUrl } from '@svc/testkit';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedNode } from '../customers-support.ts';

// The usage ingest decides what a report changes and what it causes; the gateway only decodes
// it and acknowledges (spec 4.1 rule 3).

let bed: DomainTestbed;
let handed: string[][];
let stopConsuming: () => Promise<void>;
beforeAll(async () => {
  bed = await createDomainTestbed();
  handed = [];
  stopConsuming = await bed.deps.jobs.consume(JOBS.enforceLimits, async ({ ids }) => {
    handed.push(ids);
  });
});
afterAll(async () => {
  await stopConsuming();
  await bed.close();
});

const row = (id: string) => subscriptionsWithCounters(bed.deps.db).where('id', '=', id).executeTakeFirstOrThrow();
const entry = (subscription_id: string, up: number, down = 0) => ({
  subscription_id,
  uplink_bytes: BigInt(up),
  downlink_bytes: BigInt(down),
});
/** Waits until a job was handed over (in-process or through Redis), or a while for none to come. */
const handedWithin = async (ms: number) => {
  for (const end = Date.now() + ms; handed.length === 0 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
  return handed;
};

describe('ingestUsageReport: exactly once per node by report_id, and what a report causes', () => {
  it('a report that brings an active subscription to its limit stores it limited in the report’s own unit; nothing is handed to the worker', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const f = fixtures(bed.ctx());
    const capped = await f.subscription({ access_group_ids: groups, traffic_limit_bytes: 1000 });
    const roomy = await f.subscription({ access_group_ids: groups, traffic_limit_bytes: 1_000_000 });
    handed.length = 0;
    const result = await ingestUsageReport(bed.deps, node, { report_id: 1n, entries: [entry(capped.id, 600, 400), entry(roomy.id, 10)] });
    expect(result).toMatchObject({ applied: true, accepted: 2, dropped: 0, limited: [capped.id] });
    expect((await row(capped.id)).status).toBe('limited');
    expect(Number((await row(capped.id)).used_bytes)).toBe(1000);
    expect((await row(roomy.id)).status).toBe('active');
    expect(await handedWithin(300)).toEqual([]);
  });

  it('a replayed or older report_id changes nothing and limits nothing again, yet is reported for acknowledgement', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups, traffic_limit_bytes: 100 });
    expect((await ingestUsageReport(bed.deps, node, { report_id: 7n, entries: [entry(sub.id, 150)] })).limited).toEqual([sub.id]);
    const audits = () => bed.deps.db.selectFrom('audit_log').select('action').where('entity_id', '=', sub.id).execute();
    const before = (await audits()).length;
    for (const report_id of [7n, 6n]) {
      const again = await ingestUsageReport(bed.deps, node, { report_id, entries: [entry(sub.id, 150)] });
      expect(again).toEqual({ report_id, applied: false, accepted: 0, dropped: 0, not_served: 0, invalid: 0, limited: [] });
    }
    expect(Number((await row(sub.id)).used_bytes)).toBe(150);
    expect(await audits()).toHaveLength(before);
  });

  it('a report whose unit fails after the credit leaves the subscription active and uncredited: the limit and the usage commit together', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups, traffic_limit_bytes: 100 });
    // The node's own accounting, the unit's last write, is refused: everything before it rolls back.
    await sql`alter table nodes add constraint ingest_test_refuses check (id <> ${sql.lit(node)} or last_usage_report_id is null or last_usage_report_id < 1) not valid`.execute(
      bed.deps.db,
    );
    try {
      await expect(ingestUsageReport(bed.deps, node, { report_id: 1n, entries: [entry(sub.id, 150)] })).rejects.toThrow();
    } finally {
      await sql`alter table nodes drop constraint ingest_test_refuses`.execute(bed.deps.db);
    }
    expect(await row(sub.id)).toMatchObject({ status: 'active', used_bytes: 0 });
    expect(
      await bed.deps.db
        .selectFrom('audit_log')
        .select('action')
        .where('entity_id', '=', sub.id)
        .where('action', '=', 'subscription.limited')
        .execute(),
    ).toEqual([]);
    // The agent sends it again: credited and limited once.
    expect((await ingestUsageReport(bed.deps, node, { report_id: 1n, entries: [entry(sub.id, 150)] })).limited).toEqual([sub.id]);
    expect(await row(sub.id)).toMatchObject({ status: 'limited', used_bytes: 150 });
  });

  it('entries for unknown subscriptions and absurd deltas are dropped and counted on the node; the report still applies', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups });
    const result = await ingestUsageReport(bed.deps, node, {
      report_id: 1n,
      entries: [entry(sub.id, 5, 5), entry('sub_gone', 10), { subscription_id: sub.id, uplink_bytes: -1n, downlink_bytes: 0n }],
    });
    expect(result).toMatchObject({ applied: true, accepted: 1, dropped: 2 });
    const nodeRow = await bed.deps.db
      .selectFrom('nodes')
      .select(['usage_entries_dropped', 'last_usage_report_id'])
      .where('id', '=', node)
      .executeTakeFirstOrThrow();
    expect(Number(nodeRow.usage_entries_dropped)).toBe(2);
    expect(String(nodeRow.last_usage_report_id)).toBe('1');
    expect(Number((await row(sub.id)).used_bytes)).toBe(10);
  });
});

const usedBytes = async (id: string) => Number((await row(id)).used_bytes);
const droppedOn = async (node: string) =>
  Number(
    (await bed.deps.db.selectFrom('nodes').select('usage_entries_dropped').where('id', '=', node).executeTakeFirstOrThrow())
      .usage_entries_dropped,
  );

describe('a node is credited only for the subscriptions it serves (issue 12.4)', () => {
  it('a node charging a subscription it does not serve is acknowledged, the entry dropped and counted, the victim unchanged', async () => {
    const f = fixtures(bed.ctx());
    const stranger = (await f.node()).id; // enrolled-like, no inbounds
    const { groups } = await servedNode(bed.ctx());
    const victim = await f.subscription({ access_group_ids: groups, traffic_limit_bytes: 1000 });
    const result = await ingestUsageReport(bed.deps, stranger, { report_id: 1n, entries: [entry(victim.id, 2_500_000_000)] });
    expect(result).toMatchObject({ applied: true, accepted: 0, dropped: 1, not_served: 1, limited: [] });
    expect(await usedBytes(victim.id)).toBe(0);
    expect((await row(victim.id)).status).toBe('active');
    expect(await droppedOn(stranger)).toBe(1);
    const hourly = await bed.deps.db.selectFrom('usage_hourly').select('node_id').where('subscription_id', '=', victim.id).execute();
    expect(hourly).toEqual([]);
  });

  it('a node serving another access group of the installation is not credited for this one', async () => {
    const mine = await servedNode(bed.ctx());
    const theirs = await servedNode(bed.ctx());
    const f = fixtures(bed.ctx());
    const own = await f.subscription({ access_group_ids: mine.groups });
    const victim = await f.subscription({ access_group_ids: theirs.groups });
    const result = await ingestUsageReport(bed.deps, mine.node, { report_id: 1n, entries: [entry(own.id, 10), entry(victim.id, 10)] });
    expect(result).toMatchObject({ applied: true, accepted: 1, dropped: 1, not_served: 1 });
    expect(await usedBytes(own.id)).toBe(10);
    expect(await usedBytes(victim.id)).toBe(0);
  });

  it('a subscription that left the access group is credited from its node for the grace after the change, then no more', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const other = await servedNode(bed.ctx());
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups });
    await updateSubscription(bed.ctx(), sub.id, parseInput(UpdateSubscriptionInput, { access_group_ids: other.groups }));
    bed.clock.advance(SERVED_GRACE_MS - 1000);
    expect(await ingestUsageReport(bed.deps, node, { report_id: 1n, entries: [entry(sub.id, 7)] })).toMatchObject({ accepted: 1 });
    bed.clock.advance(2000);
    expect(await ingestUsageReport(bed.deps, node, { report_id: 2n, entries: [entry(sub.id, 7)] })).toMatchObject({
      accepted: 0,
      not_served: 1,
    });
    expect(await usedBytes(sub.id)).toBe(7);
  });

  it('an inbound removed from the access group leaves its node credited for the grace, then no more', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const group = groups[0] as string;
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: [group] });
    await updateAccessGroup(bed.ctx(), group, parseInput(UpdateAccessGroupInput, { inbound_ids: [] }));
    bed.clock.advance(SERVED_GRACE_MS - 1000);
    expect(await ingestUsageReport(bed.deps, node, { report_id: 1n, entries: [entry(sub.id, 3)] })).toMatchObject({ accepted: 1 });
    bed.clock.advance(2000);
    expect(await ingestUsageReport(bed.deps, node, { report_id: 2n, entries: [entry(sub.id, 3)] })).toMatchObject({ accepted: 0 });
    expect(await usedBytes(sub.id)).toBe(3);
  });

  it('an inbound moved to another node leaves the old node credited for the grace and credits the new one', async () => {
    const { node, inbounds, groups } = await servedNode(bed.ctx());
    const target = (await fixtures(bed.ctx()).node()).id;
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups });
    await updateInbound(bed.ctx(), inbounds[0] as string, parseInput(UpdateInboundInput, { node_id: target }));
    expect(await ingestUsageReport(bed.deps, target, { report_id: 1n, entries: [entry(sub.id, 1)] })).toMatchObject({ accepted: 1 });
    bed.clock.advance(SERVED_GRACE_MS - 1000);
    expect(await ingestUsageReport(bed.deps, node, { report_id: 1n, entries: [entry(sub.id, 1)] })).toMatchObject({ accepted: 1 });
    bed.clock.advance(2000);
    expect(await ingestUsageReport(bed.deps, node, { report_id: 2n, entries: [entry(sub.id, 1)] })).toMatchObject({ accepted: 0 });
    expect(await usedBytes(sub.id)).toBe(2);
  });
});

describe('a usage entry whose subscription id can name no subscription is dropped, and the report still applies (issue 12.1)', () => {
  it('ids with NUL, a lone surrogate, empty, too long or not an id are dropped and counted; the good entry is credited', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups });
    const bad = ['sub_\u0000x', 'sub_\ud800x', '\udfff', '', 'x'.repeat(65), 'not-a-subscription-id', `${sub.id}\u0000`];
    const result = await ingestUsageReport(bed.deps, node, {
      report_id: 1n,
      entries: [...bad.map((id) => entry(id, 9)), entry(sub.id, 4)],
    });
    expect(result).toMatchObject({ applied: true, accepted: 1, dropped: bad.length });
    expect(await usedBytes(sub.id)).toBe(4);
    expect(await droppedOn(node)).toBe(bad.length);
  });
});

describe('a credit is a HOT update (issue 37.1)', () => {
  it('no index of subscriptions or usage_hourly covers a column the usage ingest adds to', async () => {
    // PostgreSQL rewrites a row in place, without new index entries, only when no index covers
    // a changed column: one index on used_bytes made every credit a full update (WAL x2.4).
    const written: Record<string, string[]> = {
      subscription_counters: ['used_bytes', 'period_uplink_bytes', 'period_downlink_bytes', 'lifetime_used_bytes'],
      usage_hourly: ['uplink_bytes', 'downlink_bytes', 'raw_uplink_bytes', 'raw_downlink_bytes'],
      traffic_slices: ['used_bytes'],
    };
    const { rows } = await sql<{ table: string; def: string }>`
      select tablename as table, indexdef as def from pg_indexes
       where schemaname = current_schema() and tablename in ('subscriptions', 'subscription_counters', 'usage_hourly', 'traffic_slices')`.execute(
      bed.deps.db,
    );
    expect(rows.length).toBeGreaterThan(5);
    const covering = rows.filter((r) =>
      (written[r.table] ?? []).some((c) => new RegExp(`\\b${c}\\b`).test(r.def.replace(/^.*? USING /, ''))),
    );
    expect(covering.map((r) => r.def)).toEqual([]);
  });
});

describe('an hourly row belongs to a subscription that exists (issue 37.1: no foreign key checks each row)', () => {
  it('a report racing the delete of a subscription it credits leaves no hourly row of it: the report waits for the delete and finds nothing to credit', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const f = fixtures(bed.ctx());
    const gone = await f.subscription({ access_group_ids: groups });
    const kept = await f.subscription({ access_group_ids: groups });
    let report: ReturnType<typeof ingestUsageReport> | undefined;
    await bed.deps.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('subscriptions').where('id', '=', gone.id).execute();
      // The report starts while the delete holds the row (on PostgreSQL it waits for the row
      // lock; on PGlite's one connection it runs after the commit): either way after the delete.
      report = ingestUsageReport(bed.deps, node, { report_id: 1n, entries: [entry(gone.id, 100), entry(kept.id, 7)] });
      await new Promise((r) => setTimeout(r, 200));
    });
    // Dropped either way; on PostgreSQL the served check still saw it (its snapshot), so it is
    // not counted as not served: the update found it gone once the delete committed.
    expect(await report).toMatchObject({ applied: true, accepted: 1, dropped: 1 });
    const hourly = await bed.deps.db
      .selectFrom('usage_hourly')
      .select(['subscription_id', 'uplink_bytes'])
      .where('node_id', '=', node)
      .execute();
    expect(hourly.map((h) => [h.subscription_id, Number(h.uplink_bytes)])).toEqual([[kept.id, 7]]);
  });

  it('a subscription deleted after its traffic was credited takes its hourly rows with it, whatever statement deletes it', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const f = fixtures(bed.ctx());
    const subs = [await f.subscription({ access_group_ids: groups }), await f.subscription({ access_group_ids: groups })];
    await ingestUsageReport(bed.deps, node, { report_id: 1n, entries: subs.map((s) => entry(s.id, 5)) });
    const hourlyOf = (id: string) => bed.deps.db.selectFrom('usage_hourly').select('hour').where('subscription_id', '=', id).execute();
    expect(await hourlyOf((subs[0] as { id: string }).id)).toHaveLength(1);
    // A plain delete of both in one statement (the verbs' deletes are tested with them).
    await bed.deps.db
      .deleteFrom('subscriptions')
      .where(
        'id',
        'in',
        subs.map((s) => s.id),
      )
      .execute();
    for (const s of subs) expect(await hourlyOf(s.id)).toEqual([]);
  });
});

/** A transaction that has done `work` and holds its locks until released, then commits. */
async function holding(work: (trx: Db) => Promise<unknown>): Promise<{ release: () => Promise<void> }> {
  let release: () => void = () => {};
  const held = new Promise<void>((r) => {
    release = r;
  });
  let done: Promise<void> | undefined;
  await new Promise<void>((ready, fail) => {
    done = bed.deps.db.transaction().execute(async (trx) => {
      await work(trx);
      ready();
      await held;
    });
    done.catch(fail);
  });
  return {
    release: async () => {
      release();
      await done;
    },
  };
}

describe.skipIf(!testDatabaseUrl())('a limit reached while an edit holds the subscription row (PostgreSQL)', () => {
  it('the credit does not wait for the edit: it commits, hands the subscription to the worker, which limits it once the edit is done', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups, traffic_limit_bytes: 100 });
    handed.length = 0;
    const edit = await holding(async (trx) => {
      await trx.selectFrom('subscriptions').select('id').where('id', '=', sub.id).forUpdate().execute();
    });
    try {
      const result = await Promise.race([
        ingestUsageReport(bed.deps, node, { report_id: 1n, entries: [entry(sub.id, 150)] }),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the credit waited for the edit')), 5_000)),
      ]);
      expect(result).toMatchObject({ applied: true, accepted: 1, limited: [] });
      expect(await handedWithin(5000)).toEqual([[sub.id]]);
    } finally {
      await edit.release();
    }
    expect(await row(sub.id)).toMatchObject({ status: 'active', used_bytes: 150 });
    expect(await enforceTrafficLimits(bed.system(), { ids: [sub.id] })).toBe(1);
    expect((await row(sub.id)).status).toBe('limited');
  });
});

describe.skipIf(!testDatabaseUrl())('an edit racing a credit (PostgreSQL)', () => {
  it('an edit that stores active from counters read before a credit committed hands the subscription to the worker, which limits it', async () => {
    const { groups } = await servedNode(bed.ctx());
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups, traffic_limit_bytes: 100 });
    await updateSubscription(bed.ctx(), sub.id, parseInput(UpdateSubscriptionInput, { status: 'disabled' }));
    handed.length = 0;
    // A credit in progress past the limit: its transaction holds the counters row, not yet committed.
    const credit = await holding(async (trx) => {
      await sql`update subscription_counters set used_bytes = used_bytes + 150 where subscription_id = ${sub.id}`.execute(trx);
    });
    try {
      // The admin enables it meanwhile: it reads the counters as committed (0) and stores active.
      const view = await updateSubscription(bed.ctx(), sub.id, parseInput(UpdateSubscriptionInput, { status: 'active' }));
      expect(view.status).toBe('active');
    } finally {
      await credit.release();
    }
    expect(await handedWithin(5000)).toEqual([[sub.id]]);
    expect(await enforceTrafficLimits(bed.system(), { ids: [sub.id] })).toBe(1);
    expect((await row(sub.id)).status).toBe('limited');
  });
});

import { sql } from 'kysely';
import { lockNodesInOrder } from '../fleet/lock-nodes.ts';
import { bumpNodeRevisions } from '../fleet/revisions.ts';
import { int8Array, textArray } from '../shared/pg-array.ts';
import { type UnitOfWorkDeps, unitOfWork } from '../shared/unit-of-work.ts';
import { creditNodeUsage, lockNodeForUsage, settleNodeUsage, summedUsage, type UsageBatch } from './usage-credit.ts';
import type { UsageDelta } from './usage-ingest.ts';

// Issue 37.1: usage staged, then folded. ingestUsageReport credits a report in the report's own
// transaction: two row writes an entry (the subscription and its hourly row), which is the
// ceiling of a machine's ingest. The gateway stages instead: a report's transaction writes its
// entries to usage_inbox, one row per part (a subscription's part is a hash of its id, the same
// in every report), and moves the node's last report id (exactly once per report id, as before:
// a replay changes nothing), and is acknowledged; the fold then credits what is staged in the
// parts it takes, summed per node, hour and subscription, with the same crediting rule
// (creditNodeUsage), and deletes what it credited, in one transaction. A subscription reported
// by several staged reports is written once. Under a light load a fold follows each report
// within milliseconds (a write an entry, as before); under a heavy one each part waits while the
// others are folded and gathers more reports of the same subscriptions, so the writes an entry
// fall until the folds keep up (a million users reporting every 10 s: docs/scale.md).

export interface UsageStageResult {
  report_id: bigint;
  /** False for a replayed or older report_id: nothing changed. */
  applied: boolean;
  /** Subscriptions staged (entries summed per id). */
  staged: number;
  /** Entries that could never name a subscription or carried a negative or oversized delta: dropped and counted on the node. */
  invalid: number;
}

/** How many parts a node's staged usage is split into (usage_inbox.part 0-15, its check constraint). */
export const USAGE_PARTS = 16;

/**
 * The part of a subscription id: FNV-1a (32 bits) of its UTF-16 code units, modulo USAGE_PARTS.
 * Fixed forever for an id (a change would only split a subscription's staged entries across two
 * parts, never lose or double them).
 */
export function usagePart(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % USAGE_PARTS;
}

/** A batch split by part, each in the batch's id order; parts without entries left out. */
export function usageParts(batch: UsageBatch): Array<UsageBatch & { part: number }> {
  const parts = Array.from({ length: USAGE_PARTS }, (_, part) => ({ part, ids: [] as string[], up: [] as bigint[], down: [] as bigint[] }));
  for (let i = 0; i < batch.ids.length; i++) {
    const id = batch.ids[i] as string;
    const p = parts[usagePart(id)] as UsageBatch;
    p.ids.push(id);
    p.up.push(batch.up[i] as bigint);
    p.down.push(batch.down[i] as bigint);
  }
  return parts.filter((p) => p.ids.length > 0);
}

/**
 * A UsageReport staged, exactly once (spec 4.1 rule 3): with the node's row locked, a report_id
 * above the node's last accepted one writes its entries, checked and summed per subscription,
 * as usage_inbox rows, one per part (with the node's multiplier of now: what the report is charged at), and
 * becomes the last accepted id; a replayed or older id changes nothing. Both are acknowledged
 * by the caller, which then asks for a fold (foldUsageInbox).
 */
export async function stageUsageReport(
  deps: UnitOfWorkDeps,
  nodeId: string,
  report: { report_id: bigint; entries: readonly UsageDelta[] },
): Promise<UsageStageResult> {
  const { batch, invalid } = summedUsage(report.entries);
  const now = deps.clock.now();
  return unitOfWork(deps, async (uow) => {
    const node = await lockNodeForUsage(uow.db, nodeId);
    if (!node || BigInt(node.last) >= report.report_id) return { report_id: report.report_id, applied: false, staged: 0, invalid: 0 };
    const parts = usageParts(batch);
    if (parts.length > 0)
      await uow.db
        .insertInto('usage_inbox')
        .values(
          parts.map(({ part, ids, up, down }) => ({
            node_id: nodeId,
            report_id: String(report.report_id),
            part,
            received_at: now,
            multiplier: node.multiplier,
            entries: ids.length,
            ids: textArray(ids),
            uplink: int8Array(up),
            downlink: int8Array(down),
          })),
        )
        .execute();
    await uow.db
      .updateTable('nodes')
      .set({
        last_usage_report_id: sql`${String(report.report_id)}::int8` as never,
        last_seen_at: now,
        ...(invalid > 0 ? { usage_entries_dropped: sql`usage_entries_dropped + ${invalid}` as never } : {}),
      })
      .where('id', '=', nodeId)
      .execute();
    return { report_id: report.report_id, applied: true, staged: batch.ids.length, invalid };
  });
}

export interface UsageFoldResult {
  /** Staged reports credited and removed (wholly or some of their parts). */
  reports: number;
  /** Their entries (subscriptions per report). */
  entries: number;
  /** Subscriptions credited: one row write each, however many reports named them. */
  credited: number;
  /** Entries of subscriptions their node does not serve (or deleted meanwhile), summed per fold. */
  uncredited: number;
  /** Of `uncredited`, per node (only nodes with some): a node charging others shows here. */
  uncredited_by_node: Array<{ node_id: string; entries: number }>;
  /** Entries still staged after this fold (reports beyond its batch, or staged meanwhile). */
  left: number;
  /** How long the oldest of them has waited (ms; 0 when none): how far credits, and the limits they reach, trail the agents. */
  oldest_ms: number;
}

/**
 * One fold at a time per part of a node across every replica (an advisory lock keyed by this and
 * the node id with the part): folds of different parts run side by side (their subscriptions
 * differ, so do the rows they write; they meet only on the node's row, settled last); one that
 * finds a part's lock held leaves its rows to the holder.
 */
const FOLD_LOCK = 'svc.usage-fold';
const HOUR_MS = 3600_000;

/**
 * Credits what is staged in the parts no other fold holds, the parts with the oldest rows first,
 * up to about `maxEntries` entries (of a part, its oldest rows up to that, at least one): per
 * node, UTC hour of receipt and multiplier, each subscription's entries summed (in PostgreSQL, by
 * the credit's own statement) and credited by creditNodeUsage at the latest receipt of the group (the hour its hourly row gets, the time a
 * first-use term starts, what "served" is judged at), each node's counters settled, then the
 * folded rows deleted, all in one transaction: a fold that fails or dies credits nothing and
 * leaves every row for the next. Null when other folds hold every part with staged rows.
 */
export async function foldUsageInbox(deps: UnitOfWorkDeps, opts: { maxEntries?: number } = {}): Promise<UsageFoldResult | null> {
  const maxEntries = opts.maxEntries ?? 100_000;
  return unitOfWork(
    deps,
    async (uow) => {
      const trx = uow.db;
      // Parts with staged rows, the oldest first: this fold takes those it can lock (one fold
      // per part at a time, across replicas) until it has about maxEntries.
      const { rows: staged } = await sql<{ node_id: string; part: number; entries: number }>`
        select node_id, part, sum(entries)::int as entries from usage_inbox
         group by node_id, part order by min(received_at), node_id, part`.execute(trx);
      if (staged.length === 0) return { reports: 0, entries: 0, credited: 0, uncredited: 0, uncredited_by_node: [], left: 0, oldest_ms: 0 };
      const mine: Array<{ node_id: string; part: number }> = [];
      let budget = 0;
      for (const n of staged) {
        if (budget >= maxEntries) break;
        const { rows: got } = await sql<{ locked: boolean }>`
          select pg_try_advisory_xact_lock(hashtext(${FOLD_LOCK}), hashtext(${`${n.node_id}/${n.part}`})) as locked`.execute(trx);
        if (!got[0]?.locked) continue;
        mine.push(n);
        budget += n.entries;
      }
      if (mine.length === 0) return null;
      // Of each part, its oldest rows whose entries, counted before each, stay under maxEntries
      // (at least one): their keys and sizes only. Their entries are summed by the credit itself,
      // in PostgreSQL (creditNodeUsage's `inbox` source): the arrays never leave the server.
      const { rows } = await sql<{
        node_id: string;
        report_id: string;
        part: number;
        received_at: Date;
        multiplier: string;
        entries: number;
      }>`
        select node_id, report_id::text as report_id, part, received_at, multiplier::text as multiplier, entries from (
          select i.node_id, i.part, i.report_id, i.received_at, i.multiplier, i.entries,
                 sum(i.entries) over (partition by i.node_id, i.part order by i.report_id) - i.entries as before
            from usage_inbox i
            join unnest(${mine.map((m) => m.node_id)}::text[], ${mine.map((m) => m.part)}::int2[]) as m(node_id, part)
              on i.node_id = m.node_id and i.part = m.part) staged
         where before < ${maxEntries}
         order by node_id, part, report_id`.execute(trx);
      if (rows.length === 0) return { reports: 0, entries: 0, credited: 0, uncredited: 0, uncredited_by_node: [], left: 0, oldest_ms: 0 };
      const groups = new Map<string, { node: string; multiplier: string; at: Date; inbox: Array<{ part: number; report_id: string }> }>();
      let entries = 0;
      for (const r of rows) {
        const hour = Math.floor(r.received_at.getTime() / HOUR_MS);
        const key = `${r.node_id}\u0000${hour}\u0000${r.multiplier}`;
        const g = groups.get(key) ?? { node: r.node_id, multiplier: r.multiplier, at: r.received_at, inbox: [] };
        groups.set(key, g);
        if (r.received_at > g.at) g.at = r.received_at;
        entries += r.entries;
        g.inbox.push({ part: r.part, report_id: r.report_id });
      }
      let credited = 0;
      let uncredited = 0;
      const limitedNodes = new Set<string>();
      // Each node's groups credited first, its own row settled last, in id order: the fold holds
      // a node's row (which each report's staging locks) only from its settling to the commit.
      // A limit reached bumps the revisions of the nodes serving the subscription: those rows
      // are locked here too, with the nodes settled, in one pass in id order, after every
      // counters row (as a period reset locks them: counters, then nodes).
      const settle = new Map<string, { raw: bigint; charged: bigint; dropped: number; at: Date }>();
      for (const g of [...groups.values()].sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : a.at.getTime() - b.at.getTime()))) {
        const credit = await creditNodeUsage(deps, uow, g.node, g.multiplier, { inbox: g.inbox }, g.at);
        credited += credit.accepted;
        uncredited += credit.uncredited;
        for (const n of credit.limited_nodes) limitedNodes.add(n);
        const s = settle.get(g.node) ?? { raw: 0n, charged: 0n, dropped: 0, at: g.at };
        s.raw += credit.raw;
        s.charged += credit.charged;
        s.dropped += credit.uncredited;
        if (g.at > s.at) s.at = g.at;
        settle.set(g.node, s);
      }
      if (limitedNodes.size > 0) {
        await lockNodesInOrder(trx, [...new Set([...settle.keys(), ...limitedNodes])]);
        await bumpNodeRevisions(uow, limitedNodes);
      }
      for (const [node, s] of [...settle].sort(([a], [b]) => (a < b ? -1 : 1)))
        await settleNodeUsage(uow, node, s, s.at, { dropped: s.dropped });
      await sql`
        delete from usage_inbox i
         using unnest(${rows.map((r) => r.node_id)}::text[], ${rows.map((r) => r.part)}::int2[], ${rows.map((r) => r.report_id)}::int8[])
               as f(node_id, part, report_id)
         where i.node_id = f.node_id and i.part = f.part and i.report_id = f.report_id`.execute(trx);
      const left = await usageInboxBacklog({ db: trx, clock: deps.clock });
      const byNode = [...settle].filter(([, x]) => x.dropped > 0).map(([node_id, x]) => ({ node_id, entries: x.dropped }));
      const reports = new Set(rows.map((r) => `${r.node_id}\u0000${r.report_id}`)).size;
      return {
        reports,
        entries,
        credited,
        uncredited,
        uncredited_by_node: byNode,
        left: left.entries,
        oldest_ms: left.oldest_ms,
      };
    },
    { attempts: 5 },
  );
}

/** Entries staged and not folded yet, and how old the oldest is (ms; 0 when none). */
export async function usageInboxBacklog(deps: Pick<UnitOfWorkDeps, 'db' | 'clock'>): Promise<{ entries: number; oldest_ms: number }> {
  const { rows } = await sql<{ n: number; oldest: Date | null }>`
    select coalesce(sum(entries), 0)::int as n, min(received_at) as oldest from usage_inbox`.execute(deps.db);
  const oldest = rows[0]?.oldest;
  return { entries: rows[0]?.n ?? 0, oldest_ms: oldest ? Math.max(0, deps.clock.now().getTime() - oldest.getTime()) : 0 };
}

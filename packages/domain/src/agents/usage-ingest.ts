import { sql } from 'kysely';
import type { DomainDeps } from '../shared/context.ts';

export interface UsageDelta {
  subscription_id: string;
  uplink_bytes: bigint;
  downlink_bytes: bigint;
}

export interface UsageIngestResult {
  report_id: bigint;
  /** False for a replayed or older report_id: nothing changed. */
  applied: boolean;
  /** Subscriptions credited. */
  accepted: number;
  /** Entries for unknown subscriptions, or with a negative or oversized delta, that were dropped. */
  dropped: number;
}

const HOUR_MS = 3600_000;
/** A single delta above this (1 PiB) is an agent bug, not traffic. */
const MAX_DELTA = 2n ** 50n;

/**
 * UsageReport, exactly once (spec 4.1 rule 3): in one transaction with the node's row
 * locked, a report_id above the node's last accepted one adds the deltas to the hourly rows
 * (per subscription, node and UTC hour of receipt) and to each subscription's used_bytes,
 * and becomes the last accepted id; a replayed or older id changes nothing. Both are
 * acknowledged with the same id by the caller. Entries for subscriptions that do not exist
 * (deleted meanwhile) are dropped and counted on the node, never failing the report.
 * Statement count is fixed (five), whatever the number of entries.
 */
export async function ingestUsageReport(
  deps: Pick<DomainDeps, 'db' | 'clock'>,
  nodeId: string,
  report: { report_id: bigint; entries: readonly UsageDelta[] },
): Promise<UsageIngestResult> {
  // Several entries of one subscription in one report are summed; bad deltas are dropped.
  const sums = new Map<string, [bigint, bigint]>();
  let invalid = 0;
  for (const e of report.entries) {
    if (
      e.uplink_bytes < 0n ||
      e.downlink_bytes < 0n ||
      e.uplink_bytes > MAX_DELTA ||
      e.downlink_bytes > MAX_DELTA ||
      e.subscription_id.length === 0 ||
      e.subscription_id.length > 64
    ) {
      invalid++;
      continue;
    }
    if (e.uplink_bytes === 0n && e.downlink_bytes === 0n) continue;
    const s = sums.get(e.subscription_id);
    if (s) {
      s[0] += e.uplink_bytes;
      s[1] += e.downlink_bytes;
    } else sums.set(e.subscription_id, [e.uplink_bytes, e.downlink_bytes]);
  }
  const now = deps.clock.now();
  const hour = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS);

  return deps.db.transaction().execute(async (trx) => {
    // As text: report ids are int64 and may exceed what a JS number holds exactly.
    const node = await trx
      .selectFrom('nodes')
      .select(sql<string>`last_usage_report_id::text`.as('last'))
      .where('id', '=', nodeId)
      .forUpdate()
      .executeTakeFirst();
    if (!node || BigInt(node.last) >= report.report_id) {
      return { report_id: report.report_id, applied: false, accepted: 0, dropped: 0 };
    }
    let accepted = 0;
    if (sums.size > 0) {
      // Lock the credited subscriptions in id order: concurrent reports of different nodes
      // touching the same subscriptions then queue instead of deadlocking.
      const known = await sql<{ id: string }>`
        select id from subscriptions where id = any(${[...sums.keys()]}::text[]) order by id for update`.execute(trx);
      const ids = known.rows.map((r) => r.id);
      accepted = ids.length;
      if (ids.length > 0) {
        const up = ids.map((id) => String((sums.get(id) as [bigint, bigint])[0]));
        const down = ids.map((id) => String((sums.get(id) as [bigint, bigint])[1]));
        await sql`
          update subscriptions s
             set used_bytes = s.used_bytes + v.up + v.down,
                 lifetime_used_bytes = s.lifetime_used_bytes + v.up + v.down
            from unnest(${ids}::text[], ${up}::int8[], ${down}::int8[]) as v(id, up, down)
           where s.id = v.id`.execute(trx);
        await sql`
          insert into usage_hourly (subscription_id, node_id, hour, uplink_bytes, downlink_bytes)
          select v.id, ${nodeId}, ${hour}, v.up, v.down
            from unnest(${ids}::text[], ${up}::int8[], ${down}::int8[]) as v(id, up, down)
          on conflict (subscription_id, hour, node_id) do update
             set uplink_bytes = usage_hourly.uplink_bytes + excluded.uplink_bytes,
                 downlink_bytes = usage_hourly.downlink_bytes + excluded.downlink_bytes`.execute(trx);
      }
    }
    const dropped = invalid + (sums.size - accepted);
    await trx
      .updateTable('nodes')
      .set({
        last_usage_report_id: sql`${String(report.report_id)}::int8` as never,
        usage_entries_dropped: sql`usage_entries_dropped + ${dropped}` as never,
        last_seen_at: now,
      })
      .where('id', '=', nodeId)
      .execute();
    return { report_id: report.report_id, applied: true, accepted, dropped };
  });
}

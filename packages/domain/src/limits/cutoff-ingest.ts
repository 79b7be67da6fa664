import { sql } from 'kysely';
import type { DomainEvent } from '../events/catalogue.ts';
import { recordEvents } from '../events/record-event.ts';
import { bumpNodeRevisions } from '../fleet/revisions.ts';
import { isStorableText } from '../shared/text.ts';
import { type UnitOfWorkDeps, unitOfWork } from '../shared/unit-of-work.ts';
import { grantTrafficSlices, type SliceGrant } from './traffic-slices.ts';

/** One entry of a CutoffReport, as the gateway decodes it. */
export interface CutoffEntry {
  subscription_id: string;
  reason: 'time' | 'slice' | 'unknown';
  /** Control-plane time of the cut as the agent estimates it (Unix ms). */
  at_ms: bigint;
  slice_id: bigint;
  slice_used_bytes: bigint;
}

export interface CutoffIngestResult {
  report_id: bigint;
  /** False for a replayed or older report_id: nothing changed (the caller acknowledges it all the same). */
  applied: boolean;
  /** Entries recorded. */
  recorded: number;
  /** Entries left out: no storable subscription id, an unknown reason, numbers out of range. */
  invalid: number;
  /** Slices granted again: the node serves those users again. */
  regranted: SliceGrant[];
}

const INT8_MAX = 2n ** 63n - 1n;
/** Unix ms from 2000 to 2200: an estimate outside is an agent's bug; the time of receipt is kept instead. */
const MIN_AT = 946_684_800_000n;
const MAX_AT = 7_258_118_400_000n;

/**
 * CutoffReport, exactly once per (node, report_id) (docs/limits.md): in one unit with the node's
 * row locked, a report_id above the node's last recorded one writes each entry to node_cutoffs,
 * raises subscription.cut_off_by_node for each existing subscription, and reconciles; a replayed
 * or older id changes nothing. Both are acknowledged by the caller (CutoffAck) with the same id.
 *
 * Reconciling: a slice cut whose slice is still the node's current one, and a time cut of a
 * subscription that is still active (extended meanwhile), get a fresh slice when the
 * subscription has traffic left (grantTrafficSlices, forced; new slice_id, new revision), so the
 * node serves it again; a time cut of a subscription still active gives the node a new revision
 * in any case (its not_after_ms moved: an expiry change alone bumps no revision). Anything else (expired, limited) is left to
 * the status rules, which take the user off the node.
 */
export async function ingestCutoffReport(
  deps: UnitOfWorkDeps,
  nodeId: string,
  report: { report_id: bigint; entries: readonly CutoffEntry[] },
): Promise<CutoffIngestResult> {
  const now = deps.clock.now();
  let invalid = 0;
  const entries: Array<{ subscription_id: string; reason: 'time' | 'slice'; cut_at: Date; slice_id: string; used: string }> = [];
  for (const e of report.entries) {
    if (
      e.reason === 'unknown' ||
      e.subscription_id.length === 0 ||
      e.subscription_id.length > 64 ||
      !isStorableText(e.subscription_id) ||
      e.slice_id < 0n ||
      e.slice_id > INT8_MAX ||
      e.slice_used_bytes < 0n ||
      e.slice_used_bytes > INT8_MAX
    ) {
      invalid++;
      continue;
    }
    const cutAt = e.at_ms >= MIN_AT && e.at_ms <= MAX_AT ? new Date(Number(e.at_ms)) : now;
    entries.push({
      subscription_id: e.subscription_id,
      reason: e.reason,
      cut_at: cutAt,
      slice_id: String(e.slice_id),
      used: String(e.slice_used_bytes),
    });
  }
  const skipped: CutoffIngestResult = { report_id: report.report_id, applied: false, recorded: 0, invalid: 0, regranted: [] };
  if (report.report_id <= 0n || report.report_id > INT8_MAX) return skipped;

  return unitOfWork(
    deps,
    async (uow) => {
      const trx = uow.db;
      const node = await trx
        .selectFrom('nodes')
        .select(sql<string>`last_cutoff_report_id::text`.as('last'))
        .where('id', '=', nodeId)
        .forUpdate()
        .executeTakeFirst();
      if (!node || BigInt(node.last) >= report.report_id) return skipped;
      await trx
        .updateTable('nodes')
        .set({ last_cutoff_report_id: sql`${String(report.report_id)}::int8` as never, last_seen_at: now })
        .where('id', '=', nodeId)
        .execute();
      if (entries.length === 0) return { ...skipped, applied: true, invalid };
      await trx
        .insertInto('node_cutoffs')
        .values(
          entries.map((e, entry) => ({
            node_id: nodeId,
            subscription_id: e.subscription_id,
            report_id: String(report.report_id),
            entry,
            reason: e.reason,
            cut_at: e.cut_at,
            slice_id: e.slice_id,
            slice_used_bytes: e.used,
            recorded_at: now,
          })),
        )
        .execute();
      const ids = [...new Set(entries.map((e) => e.subscription_id))];
      const subs = await trx
        .selectFrom('subscriptions as s')
        .leftJoin('traffic_slices as t', (j) => j.onRef('t.subscription_id', '=', 's.id').on('t.node_id', '=', nodeId))
        .select([
          's.id',
          's.client_id',
          's.status',
          's.expires_at',
          's.traffic_limit_bytes',
          sql<string | null>`t.slice_id::text`.as('slice_id'),
        ])
        .where('s.id', 'in', ids)
        .execute();
      const byId = new Map(subs.map((s) => [s.id, s]));
      const events: DomainEvent[] = [];
      const force: Array<{ node_id: string; subscription_id: string }> = [];
      let timeStillActive = false;
      for (const e of entries) {
        const s = byId.get(e.subscription_id);
        if (!s) continue;
        events.push({
          type: 'subscription.cut_off_by_node',
          payload: {
            subscription_id: s.id,
            client_id: s.client_id,
            node_id: nodeId,
            reason: e.reason,
            cut_at: e.cut_at.toISOString(),
            slice_id: Number(e.slice_id),
            slice_used_bytes: Number(e.used),
          },
        });
        const active = s.status === 'active' && (s.expires_at === null || s.expires_at.getTime() > now.getTime());
        if (!active) continue;
        if (e.reason === 'slice' && s.slice_id === e.slice_id) force.push({ node_id: nodeId, subscription_id: s.id });
        if (e.reason === 'time') {
          timeStillActive = true;
          if (s.traffic_limit_bytes !== null) force.push({ node_id: nodeId, subscription_id: s.id });
        }
      }
      await recordEvents(uow, events, now);
      const regranted = force.length
        ? await grantTrafficSlices(uow, [nodeId], now, { subscriptions: force.map((f) => f.subscription_id), force })
        : [];
      if (timeStillActive && regranted.length === 0) await bumpNodeRevisions(uow, [nodeId]);
      return { report_id: report.report_id, applied: true, recorded: entries.length, invalid, regranted };
    },
    { attempts: 5 },
  );
}

import { sql } from 'kysely';
import { certificateServedEvents } from '../certificates/certificate-rollouts.ts';
import { recordEvent, recordEvents } from '../events/record-event.ts';
import { lockNodesInOrder } from '../fleet/lock-nodes.ts';
import { retryOnConflict } from '../shared/db-errors.ts';
import { type UnitOfWorkDeps, unitOfWork } from '../shared/unit-of-work.ts';

/** A node that had failed to apply and now runs a revision at or past the failed one. */
export interface ApplyRecovery {
  node_id: string;
  name: string;
  revision: number;
  failed_revision: number;
  failing_since: Date;
}

/**
 * Successful ApplyResults of many nodes in one statement (the gateway gathers those that
 * arrive together: a change to a group of 1,000 nodes brings 1,000 of them within a second).
 * applied_revision moves forward only. A recorded failure (recordApplyFailure) is cleared once
 * the applied revision reaches the failed one, which raises node.apply_recovered; a success of
 * an older revision leaves it standing. Returns the nodes that recovered.
 */
export async function recordAppliedRevisions(
  deps: UnitOfWorkDeps,
  applied: ReadonlyArray<{ node_id: string; revision: number }>,
): Promise<ApplyRecovery[]> {
  if (applied.length === 0) return [];
  const latest = new Map<string, number>();
  // The revision is the agent's int64: one beyond a safe integer (String() of it is no int8, or
  // not a number literal at all) would fail the statement for every node of the batch, so it is
  // capped here, and the statement caps every revision at the node's desired one (an agent
  // cannot have applied a revision it was never sent).
  const revisionOf = (r: number) => Math.min(Math.max(0, Math.trunc(r)), Number.MAX_SAFE_INTEGER);
  for (const a of applied) latest.set(a.node_id, Math.max(latest.get(a.node_id) ?? 0, revisionOf(a.revision)));
  // Rows locked in id order first (lockNodesInOrder: no deadlock against a revision bump).
  const ids = [...latest.keys()].sort();
  const revisions = ids.map((id) => String(latest.get(id)));
  const now = deps.clock.now();
  return retryOnConflict(() =>
    unitOfWork(deps, async (uow) => {
      await lockNodesInOrder(uow.db, ids);
      const appliedNow = sql`greatest(n.applied_revision, least(v.revision, n.desired_revision))`;
      const clears = sql`(n.apply_failed_revision is null or ${appliedNow} >= n.apply_failed_revision)`;
      // `prior` is the rows as they were before this statement (one snapshot for the statement,
      // the rows locked above): the failure a success cleared, for the event.
      const { rows } = await sql<{
        id: string;
        name: string;
        applied_revision: string;
        failed_revision: string | null;
        failing_since: Date | null;
        cleared: boolean;
      }>`
    with prior as (select id, apply_failed_revision, apply_failing_since from nodes where id = any(${ids}::text[]))
    update nodes n
       set applied_revision = ${appliedNow},
           last_apply_error = case when ${clears} then null else n.last_apply_error end,
           apply_failed_revision = case when ${clears} then null else n.apply_failed_revision end,
           apply_failing_since = case when ${clears} then null else n.apply_failing_since end,
           last_apply_at = ${now},
           last_seen_at = ${now}
      from unnest(${ids}::text[], ${revisions}::int8[]) as v(id, revision), prior p
     where n.id = v.id and p.id = n.id
    returning n.id, n.name, n.applied_revision, p.apply_failed_revision as failed_revision,
              p.apply_failing_since as failing_since, n.apply_failed_revision is null as cleared`.execute(uow.db);
      uow.nodeViewsChanged(rows.map((r) => r.id));
      const recovered: ApplyRecovery[] = [];
      for (const r of rows) {
        if (r.failed_revision === null || !r.cleared) continue;
        const recovery: ApplyRecovery = {
          node_id: r.id,
          name: r.name,
          revision: Number(r.applied_revision),
          failed_revision: Number(r.failed_revision),
          failing_since: new Date(r.failing_since ?? now),
        };
        recovered.push(recovery);
        await recordEvent(
          uow,
          { type: 'node.apply_recovered', payload: { ...recovery, failing_since: recovery.failing_since.toISOString() } },
          now,
        );
      }
      // Certificates whose new material these revisions carried are served now.
      await recordEvents(
        uow,
        await certificateServedEvents(
          uow,
          rows.map((r) => r.id),
        ),
        now,
      );
      return recovered;
    }),
  );
}

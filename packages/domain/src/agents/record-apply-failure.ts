import { recordEvent } from '../events/record-event.ts';
import { lockNodesInOrder } from '../fleet/lock-nodes.ts';
import { retryOnConflict } from '../shared/db-errors.ts';
import { type UnitOfWorkDeps, unitOfWork } from '../shared/unit-of-work.ts';

/** How much of the agent's error text is kept: its end, where engines say what they refused. */
export const APPLY_ERROR_MAX = 4000;

export interface ApplyFailure {
  node_id: string;
  name: string;
  /** The failed revision (never above the node's desired one). */
  revision: number;
  /** The revision the node still runs. */
  applied_revision: number;
  /** The agent's words as stored (the last APPLY_ERROR_MAX characters). */
  error: string;
  failing_since: Date;
  /** A revision not failed before: node.apply_failed was raised for it. A repeat raises nothing. */
  first: boolean;
}

/** The agent's error text as kept: trimmed, its tail when long (v2ray prints banners and info lines before the reason). */
export function applyErrorText(error: string): string {
  const t = error.trim();
  if (t === '') return 'failed without an error text';
  return t.length > APPLY_ERROR_MAX ? `…${t.slice(-(APPLY_ERROR_MAX - 1))}` : t;
}

/**
 * ApplyResult with success false (spec 3.5: the stream stays open). The node keeps its applied
 * revision and shows the failure until a revision at or past it applies (recordAppliedRevisions):
 * `last_apply_error` ("revision N: <the agent's words>"), `apply_failed_revision` and
 * `apply_failing_since` (the first failure since the last success). A revision that has not
 * failed before raises node.apply_failed, once: the agent sends the same failure again on every
 * reconnect. Null when the node is gone.
 */
export async function recordApplyFailure(
  deps: UnitOfWorkDeps,
  nodeId: string,
  r: { revision: number; error: string },
): Promise<ApplyFailure | null> {
  const error = applyErrorText(r.error);
  return retryOnConflict(() =>
    unitOfWork(deps, async (uow) => {
      await lockNodesInOrder(uow.db, [nodeId]);
      const row = await uow.db
        .selectFrom('nodes')
        .select(['name', 'desired_revision', 'applied_revision', 'apply_failed_revision', 'apply_failing_since'])
        .where('id', '=', nodeId)
        .executeTakeFirst();
      if (!row) return null;
      const now = deps.clock.now();
      // The agent's int64, capped as the successful path caps it: never above the desired revision.
      const revision = Math.min(Math.max(0, Math.trunc(r.revision)), Number(row.desired_revision));
      const failedBefore = row.apply_failed_revision === null ? null : Number(row.apply_failed_revision);
      const first = failedBefore === null || revision > failedBefore;
      const failingSince = row.apply_failing_since ?? now;
      await uow.db
        .updateTable('nodes')
        .set({
          last_apply_error: `revision ${revision}: ${error}`,
          apply_failed_revision: Math.max(revision, failedBefore ?? 0),
          apply_failing_since: failingSince,
          last_apply_at: now,
          last_seen_at: now,
        })
        .where('id', '=', nodeId)
        .execute();
      uow.nodeViewsChanged([nodeId]);
      const failure: ApplyFailure = {
        node_id: nodeId,
        name: row.name,
        revision,
        applied_revision: Number(row.applied_revision),
        error,
        failing_since: failingSince,
        first,
      };
      if (first)
        await recordEvent(
          uow,
          {
            type: 'node.apply_failed',
            payload: {
              node_id: nodeId,
              name: row.name,
              revision,
              applied_revision: failure.applied_revision,
              error,
              failing_since: failingSince.toISOString(),
            },
          },
          now,
        );
      return failure;
    }),
  );
}

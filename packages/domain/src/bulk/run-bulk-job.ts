import { recordEvents } from '../events/record-event.ts';
import { bumpNodeRevisions } from '../fleet/revisions.ts';
import { TOPICS } from '../shared/bus.ts';
import type { Actor, DomainContext, DomainDeps } from '../shared/context.ts';
import { JOBS } from '../shared/jobs.ts';
import { type UnitOfWork, unitOfWork } from '../shared/unit-of-work.ts';
import { applyClientChunk } from './apply-client-chunk.ts';
import { applySubscriptionChunk } from './apply-subscription-chunk.ts';
import type { ClientBulkAction, SubscriptionBulkAction } from './bulk-input.ts';
import { BULK_JOB_COLUMNS, type BulkJobView, bulkJobView } from './bulk-job-view.ts';

/** Subjects one transaction takes. */
export const BULK_CHUNK = 500;
/** A queued job whose enqueue was lost goes to the queue again after this long. */
const REQUEUE_AFTER_MS = 60_000;
/** A running job silent this long (a chunk commits every second or so) died with its worker. */
const RUNNING_SILENT_MS = 2 * 60_000;

type RunDeps = Pick<DomainDeps, 'db' | 'clock' | 'log' | 'bus' | 'jobs' | 'secrets'>;

/**
 * `bulk.run` (docs/integrations.md, "Bulk actions"): the job's items, a chunk at a time, each
 * chunk one transaction that changes its subjects, marks their items done, counts the progress
 * and records the chunk's events, so a worker that dies mid-way loses only an uncommitted chunk
 * and the job, run again, takes only items not done: nothing is applied twice. The nodes the
 * changes reach are gathered on the job and each gets one new revision in the transaction that
 * marks the job done. Progress goes to the admin event stream after each chunk. Audit entries
 * name the admin (and API token) who asked.
 */
export async function runBulkJob(
  deps: RunDeps,
  id: string,
  opts: { chunk?: number; afterChunk?: () => Promise<void> } = {},
): Promise<BulkJobView | null> {
  const job = await deps.db.selectFrom('bulk_jobs').selectAll().where('id', '=', id).executeTakeFirst();
  if (!job || job.status === 'done' || job.status === 'failed') return job ? bulkJobView(job) : null;
  const actor: Actor = job.created_by
    ? { type: 'admin', id: job.created_by, ...(job.created_by_token ? { tokenId: job.created_by_token } : {}) }
    : { type: 'system', id: null };
  const ctx = { ...deps, actor };
  const action = (typeof job.action === 'string' ? JSON.parse(job.action) : job.action) as SubscriptionBulkAction | ClientBulkAction;
  const chunk = opts.chunk ?? BULK_CHUNK;
  for (;;) {
    const took = await unitOfWork(ctx, async (uow) => {
      const now = deps.clock.now();
      const items = await uow.db
        .selectFrom('bulk_job_items')
        .select('subject_id')
        .where('job_id', '=', id)
        .where('done_at', 'is', null)
        .orderBy('subject_id')
        .limit(chunk)
        .forUpdate()
        .skipLocked()
        .execute();
      if (items.length === 0) return 0;
      const ids = items.map((i) => i.subject_id);
      const result =
        job.target === 'subscriptions'
          ? await applySubscriptionChunk(uow, deps, id, action as SubscriptionBulkAction, ids, now)
          : await applyClientChunk(uow, id, action as ClientBulkAction, ids, now);
      await recordEvents(uow, result.events, now);
      if (result.nodes.length > 0)
        await uow.db
          .insertInto('bulk_job_nodes')
          .values(result.nodes.map((node_id) => ({ job_id: id, node_id })))
          .onConflict((oc) => oc.doNothing())
          .execute();
      await uow.db.updateTable('bulk_job_items').set({ done_at: now }).where('job_id', '=', id).where('subject_id', 'in', ids).execute();
      if (result.skipped.length > 0)
        await uow.db
          .updateTable('bulk_job_items')
          .set({ skipped: true })
          .where('job_id', '=', id)
          .where('subject_id', 'in', result.skipped)
          .execute();
      const row = await uow.db
        .updateTable('bulk_jobs')
        .set((eb) => ({
          status: 'running',
          done: eb('done', '+', ids.length),
          skipped: eb('skipped', '+', result.skipped.length),
          updated_at: now,
        }))
        .where('id', '=', id)
        .returning(BULK_JOB_COLUMNS)
        .executeTakeFirstOrThrow();
      announce(uow, bulkJobView(row));
      return ids.length;
    });
    if (took === 0) break;
    await opts.afterChunk?.();
  }
  return finishBulkJob(ctx, id);
}

/** The job's end: its nodes bumped once each, the job done; in one transaction (a crash before it finishes again). */
async function finishBulkJob(ctx: RunDeps & { actor: Actor }, id: string): Promise<BulkJobView> {
  return unitOfWork(ctx, async (uow) => {
    const now = ctx.clock.now();
    const job = await uow.db.selectFrom('bulk_jobs').select(['status', 'done']).where('id', '=', id).forUpdate().executeTakeFirstOrThrow();
    if (job.status !== 'done') {
      const nodes = await uow.db.selectFrom('bulk_job_nodes').select('node_id').where('job_id', '=', id).execute();
      const bumped = await bumpNodeRevisions(
        uow,
        nodes.map((n) => n.node_id),
      );
      await uow.db.updateTable('bulk_jobs').set({ status: 'done', updated_at: now, finished_at: now }).where('id', '=', id).execute();
      uow.audit({ action: 'bulk.done', entity_type: 'bulk_job', entity_id: id, details: { done: job.done, nodes_bumped: bumped.length } });
    }
    const row = await uow.db.selectFrom('bulk_jobs').select(BULK_JOB_COLUMNS).where('id', '=', id).executeTakeFirstOrThrow();
    const view = bulkJobView(row);
    announce(uow, view);
    return view;
  });
}

/** The job's progress on the admin event stream (AdminLiveEvent `bulk_job`). */
function announce(uow: UnitOfWork, v: BulkJobView): void {
  uow.publish(TOPICS.adminEvents, { type: 'bulk_job', id: v.id, status: v.status, done: v.done, total: v.total, skipped: v.skipped });
}

/** `bulk.sweep`: jobs whose enqueue was lost, or whose worker died (silent), handed to the queue again. */
export async function requeueStaleBulkJobs(ctx: Pick<DomainContext, 'db' | 'clock' | 'jobs'>): Promise<number> {
  const now = ctx.clock.now().getTime();
  const rows = await ctx.db
    .selectFrom('bulk_jobs')
    .select('id')
    .where((eb) =>
      eb.or([
        eb.and([eb('status', '=', 'queued'), eb('updated_at', '<', new Date(now - REQUEUE_AFTER_MS))]),
        eb.and([eb('status', '=', 'running'), eb('updated_at', '<', new Date(now - RUNNING_SILENT_MS))]),
      ]),
    )
    .execute();
  for (const r of rows) await ctx.jobs.enqueue(JOBS.bulkRun, { id: r.id }, { id: `bulk-${r.id}-${now}` });
  return rows.length;
}

import type { BulkTarget } from '@svc/db';
import { type SelectQueryBuilder, sql } from 'kysely';
import { clientView } from '../clients/client-view.ts';
import { clientsMatching } from '../clients/read-clients.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { newId } from '../shared/ids.ts';
import { JOBS } from '../shared/jobs.ts';
import type { SearchBranch } from '../shared/list-query.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { unknownAccessGroups } from '../subscriptions/access-groups.ts';
import { subscriptionsMatching } from '../subscriptions/read-subscriptions.ts';
import { subscriptionsWithCounters } from '../subscriptions/subscription-rows.ts';
import { groupIdsOf, subscriptionReadView } from '../subscriptions/subscription-view.ts';
import { BULK_MAX_ITEMS, BULK_SAMPLE, type ClientBulkInput, type SubscriptionBulkInput } from './bulk-input.ts';
import { BULK_JOB_COLUMNS, type BulkJobView, bulkJobView } from './bulk-job-view.ts';

export interface BulkDryRun<T> {
  dry_run: true;
  /** How many the job would take now. */
  count: number;
  /** The first few of them (by id). */
  sample: T[];
}

type IdQuery = SelectQueryBuilder<any, any, { id: string }>;

/** The ids a selection takes: the filter's query (any of its search branches), or the given ids that exist. */
function idsOf(base: SelectQueryBuilder<any, any, any>, anyOf: SearchBranch[] | undefined, ids: readonly string[] | undefined): IdQuery {
  let q = base.clearSelect().select('id');
  if (ids) q = q.where('id', 'in', [...new Set(ids)]);
  if (!anyOf || anyOf.length === 0) return q as IdQuery;
  const [first, ...rest] = anyOf.map((branch) => branch(q));
  return rest.reduce((acc, b) => acc.union(b), first as IdQuery) as IdQuery;
}

/**
 * POST /subscriptions/bulk (docs/integrations.md, "Bulk actions"): a dry run answers how many
 * the selection takes and a sample; otherwise the ids are written down with the job in one
 * transaction (what a filter selects now is what the job changes, whatever the filter selects
 * later) and the worker's `bulk.run` applies the action (runBulkJob).
 */
export async function queueSubscriptionBulk(ctx: DomainContext, input: SubscriptionBulkInput) {
  if (input.action.type === 'set_access_groups') {
    const errors = await unknownAccessGroups(ctx.db, input.action.access_group_ids);
    if (Object.keys(errors).length > 0)
      throw new ValidationError('unknown access groups', { 'action.access_group_ids': Object.values(errors).join('; ') });
  }
  const now = ctx.clock.now();
  const { q, anyOf } = input.filter ? subscriptionsMatching(ctx, input.filter, now) : subscriptionsMatching(ctx, {}, now);
  const ids = idsOf(q, input.filter ? anyOf : undefined, input.ids);
  if (input.dry_run) {
    const { count, sampleIds } = await countAndSample(ctx, ids);
    const rows = sampleIds.length ? await subscriptionsWithCounters(ctx.db).where('id', 'in', sampleIds).orderBy('id').execute() : [];
    const groups = await groupIdsOf(
      ctx.db,
      rows.map((r) => r.id),
    );
    return { dry_run: true as const, count, sample: rows.map((r) => subscriptionReadView(ctx, r, groups.get(r.id) ?? [], now)) };
  }
  return createJob(ctx, 'subscriptions', input, ids);
}

/** POST /clients/bulk: the same for clients (approve, reject, disable, enable, delete). */
export async function queueClientBulk(ctx: DomainContext, input: ClientBulkInput) {
  const ids = idsOf(clientsMatching(ctx, input.filter ?? {}), undefined, input.ids);
  if (input.dry_run) {
    const { count, sampleIds } = await countAndSample(ctx, ids);
    const rows = sampleIds.length
      ? await ctx.db.selectFrom('clients').selectAll().where('id', 'in', sampleIds).orderBy('id').execute()
      : [];
    return { dry_run: true as const, count, sample: rows.map(clientView) };
  }
  return createJob(ctx, 'clients', input, ids);
}

async function countAndSample(ctx: DomainContext, ids: IdQuery): Promise<{ count: number; sampleIds: string[] }> {
  const counted = await ctx.db.selectFrom(ids.as('m')).select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
  const sample = await ctx.db.selectFrom(ids.as('m')).select('m.id').orderBy('m.id').limit(BULK_SAMPLE).execute();
  return { count: counted.n, sampleIds: sample.map((r) => r.id) };
}

async function createJob(
  ctx: DomainContext,
  target: BulkTarget,
  input: SubscriptionBulkInput | ClientBulkInput,
  ids: IdQuery,
): Promise<BulkJobView> {
  return unitOfWork(ctx, async (uow) => {
    const now = ctx.clock.now();
    const id = newId('blk', now.getTime());
    await uow.db
      .insertInto('bulk_jobs')
      .values({
        id,
        target,
        action: JSON.stringify(input.action),
        selection: JSON.stringify(input.ids ? { ids_given: input.ids.length } : { filter: input.filter }),
        status: 'queued',
        total: 0,
        error: null,
        created_by: uow.actor.id,
        created_by_token: uow.actor.tokenId ?? null,
        created_at: now,
        updated_at: now,
        finished_at: null,
      })
      .execute();
    const inserted = await uow.db
      .insertInto('bulk_job_items')
      .columns(['job_id', 'subject_id'])
      .expression(uow.db.selectFrom(ids.as('m')).select([sql.lit(id).as('job_id'), 'm.id']))
      .executeTakeFirst();
    const total = Number(inserted.numInsertedOrUpdatedRows ?? 0);
    if (total > BULK_MAX_ITEMS)
      throw new ValidationError('the selection is too large', {
        filter: `selects ${total} (at most ${BULK_MAX_ITEMS} a job): narrow it, or run several jobs`,
      });
    const row = await uow.db
      .updateTable('bulk_jobs')
      .set({ total, ...(total === 0 ? { status: 'done', finished_at: now } : {}) })
      .where('id', '=', id)
      .returning(BULK_JOB_COLUMNS)
      .executeTakeFirstOrThrow();
    uow.audit({
      action: 'bulk.queued',
      entity_type: 'bulk_job',
      entity_id: id,
      details: { target, action: input.action, total, ...(input.ids ? { ids_given: input.ids.length } : { filter: input.filter }) },
    });
    if (total > 0) uow.enqueue(JOBS.bulkRun, { id }, { id: `bulk-${id}` });
    return bulkJobView(row);
  });
}

export async function getBulkJob(ctx: Pick<DomainContext, 'db'>, id: string): Promise<BulkJobView> {
  const row = await ctx.db.selectFrom('bulk_jobs').select(BULK_JOB_COLUMNS).where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('bulk job', id);
  return bulkJobView(row);
}

/** GET /bulk-jobs: the latest 50, newest first. */
export async function listBulkJobs(ctx: Pick<DomainContext, 'db'>): Promise<BulkJobView[]> {
  const rows = await ctx.db.selectFrom('bulk_jobs').select(BULK_JOB_COLUMNS).orderBy('id', 'desc').limit(50).execute();
  return rows.map(bulkJobView);
}

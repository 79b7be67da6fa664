import type { Renewal, SubscriptionStatus } from '@svc/db';
import type { DomainEvent } from '../events/catalogue.ts';
import { recordEvents } from '../events/record-event.ts';
import { bumpNodeRevisions, nodesOfSubscriptions } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { JOBS } from '../shared/jobs.ts';
import { type UnitOfWork, unitOfWork } from '../shared/unit-of-work.ts';
import { subscriptionChangeEvents } from './subscription-events.ts';
import { zeroPeriodCounters } from './subscription-rows.ts';
import { currentStatus } from './subscription-status.ts';

const DAY = 86_400_000;

/**
 * Start of the renewal period holding `now`, in UTC: midnight (day), Monday midnight
 * (week, ISO), the 1st of the month at midnight (month). Null for no_reset.
 */
export function periodStart(renewal: Renewal, now: Date): Date | null {
  const t = now.getTime();
  switch (renewal) {
    case 'no_reset':
      return null;
    case 'day':
      return new Date(Math.floor(t / DAY) * DAY);
    case 'week': {
      const midnight = Math.floor(t / DAY) * DAY;
      const sinceMonday = (new Date(midnight).getUTCDay() + 6) % 7;
      return new Date(midnight - sinceMonday * DAY);
    }
    case 'month':
      return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  }
}

/**
 * When the renewal period holding `now` ends and the traffic counts start again (the next
 * periodStart), in UTC; null for no_reset. What the customer reads as "resets on …".
 */
export function nextPeriodStart(renewal: Renewal, now: Date): Date | null {
  const start = periodStart(renewal, now);
  if (!start) return null;
  switch (renewal) {
    case 'day':
      return new Date(start.getTime() + DAY);
    case 'week':
      return new Date(start.getTime() + 7 * DAY);
    default:
      return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
  }
}

/**
 * Writes down the traffic limits that usage has reached: subscriptions stored as active
 * whose used_bytes reached traffic_limit_bytes take the status the rule gives now (limited,
 * or expired if that came first), their nodes get a new revision so they drop those users,
 * and each change is audited (as the caller's actor: the system for the worker). A batch at a
 * time (call again while it returns `batch`); `ids` limits it to some subscriptions. The
 * safety net of the sweep: a credit writes down the limits it reaches itself
 * (writeReachedLimits, in its own unit); this finds any other write that left a row active
 * past its limit.
 */
export async function enforceTrafficLimits(ctx: DomainContext, opts: { batch?: number; ids?: readonly string[] } = {}): Promise<number> {
  if (opts.ids && opts.ids.length === 0) return 0;
  return unitOfWork(ctx, async (uow) => {
    const written = await writeReachedLimits(uow, ctx.clock.now(), { ...opts, skipLocked: true });
    await bumpNodeRevisions(uow, written.nodes);
    return written.changed.length;
  });
}

/**
 * For a write that stores a status from counters it read without locking them (an edit, which
 * a usage credit must not wait for): the limit of those it made active or whose limit it
 * changed, stored active under a limit, is judged again just after its commit (the job
 * subscriptions.enforce-limits), so a credit that committed meanwhile, past a limit the edit set
 * or from a status it restored, is written down in moments, not at the next sweep. A row that
 * stays active under the same limit needs nothing: a credit's snapshot saw it active, and the
 * credit writes the limit itself or hands the row on when the edit holds it.
 */
export function recheckLimitsAfterCommit(
  uow: UnitOfWork,
  rows: ReadonlyArray<{ id: string; from: StatusAndLimit; to: StatusAndLimit }>,
): void {
  const limitOf = (r: StatusAndLimit) => (r.traffic_limit_bytes === null ? null : String(r.traffic_limit_bytes));
  const ids = rows
    .filter(
      ({ from, to }) =>
        to.status === 'active' && to.traffic_limit_bytes !== null && (from.status !== 'active' || limitOf(from) !== limitOf(to)),
    )
    .map((r) => r.id);
  if (ids.length > 0) uow.enqueue(JOBS.enforceLimits, { ids });
}

interface StatusAndLimit {
  status: SubscriptionStatus;
  traffic_limit_bytes: number | string | bigint | null;
}

/**
 * The rule of enforceTrafficLimits inside the caller's unit of work: stored-active rows (of
 * `ids`, when given) at or past their limit are locked, take the status the rule gives as of
 * `now`, and are audited with their events. Returns the subscriptions whose status it changed
 * (every row it found: an active row past its limit is limited or expired by the rule) and the
 * nodes that serve them, whose revisions the caller bumps in this same transaction (spec 3.5)
 * when its lock order allows (a fold: with the nodes it settles, in id order, last).
 * `skipLocked` leaves rows another transaction holds to the caller (the usage credit hands them
 * to the worker) or a later sweep; without it the caller waits for them.
 */
export async function writeReachedLimits(
  uow: UnitOfWork,
  now: Date,
  opts: { batch?: number; ids?: readonly string[]; skipLocked?: boolean },
): Promise<{ changed: string[]; nodes: string[] }> {
  const batch = opts.batch ?? 500;
  if (opts.ids && opts.ids.length === 0) return { changed: [], nodes: [] };
  const trx = uow.db;
  let q = trx
    .selectFrom('subscriptions')
    .innerJoin('subscription_counters as sc', 'sc.subscription_id', 'subscriptions.id')
    .select(['id', 'client_id', 'status', 'sc.used_bytes', 'traffic_limit_bytes', 'expires_at'])
    .where('status', '=', 'active')
    .where('traffic_limit_bytes', 'is not', null)
    .whereRef('sc.used_bytes', '>=', 'traffic_limit_bytes');
  if (opts.ids) q = q.where('id', 'in', opts.ids);
  const locked = q.orderBy('id').limit(batch).forUpdate('subscriptions');
  const due = await (opts.skipLocked ? locked.skipLocked() : locked).execute();
  const changed: Array<{ id: string; from: SubscriptionStatus; to: SubscriptionStatus }> = [];
  const events: DomainEvent[] = [];
  for (const r of due) {
    const to = currentStatus(
      {
        ...r,
        used_bytes: Number(r.used_bytes),
        traffic_limit_bytes: r.traffic_limit_bytes === null ? null : Number(r.traffic_limit_bytes),
      },
      now,
    );
    if (to === r.status) continue;
    changed.push({ id: r.id, from: r.status, to });
    events.push(...subscriptionChangeEvents({ id: r.id, client_id: r.client_id, from: r, to: { ...r, status: to } }));
  }
  if (changed.length === 0) return { changed: [], nodes: [] };
  uow.subscriptionLinksChanged();
  for (const to of new Set(changed.map((c) => c.to))) {
    const ids = changed.filter((c) => c.to === to).map((c) => c.id);
    await trx.updateTable('subscriptions').set({ status: to, updated_at: now }).where('id', 'in', ids).execute();
  }
  const nodes = await nodesOfSubscriptions(
    trx,
    changed.map((c) => c.id),
  );
  for (const c of changed) {
    uow.audit({
      action: `subscription.${c.to}`,
      entity_type: 'subscription',
      entity_id: c.id,
      details: { status: { from: c.from, to: c.to }, reason: 'traffic limit reached' },
    });
  }
  await recordEvents(uow, events, now);
  return { changed: changed.map((c) => c.id), nodes };
}

/**
 * Starts the new renewal period of subscriptions whose period has ended (renewal day, week or
 * month; boundaries in UTC, see periodStart): used_bytes goes back to 0 and period_started_at
 * to the boundary, the status is computed again (a limited one is active again unless it
 * expired or was disabled meanwhile), nodes get a new revision where the status changed, and
 * each reset is audited. A batch at a time; returns how many were reset.
 */
export async function resetEndedPeriods(ctx: DomainContext, batch = 500): Promise<number> {
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const now = ctx.clock.now();
    const starts = {
      day: periodStart('day', now) as Date,
      week: periodStart('week', now) as Date,
      month: periodStart('month', now) as Date,
    };
    const due = await trx
      .selectFrom('subscriptions')
      .innerJoin('subscription_counters as sc', 'sc.subscription_id', 'subscriptions.id')
      .select(['id', 'status', 'renewal', 'sc.used_bytes', 'traffic_limit_bytes', 'expires_at', 'period_started_at'])
      .where((eb) =>
        eb.or((['day', 'week', 'month'] as const).map((r) => eb.and([eb('renewal', '=', r), eb('period_started_at', '<', starts[r])]))),
      )
      .orderBy('id')
      .limit(batch)
      // The counters row is written below (a credit meanwhile waits for it, then adds to 0).
      .forUpdate()
      .skipLocked()
      .execute();
    if (due.length === 0) return 0;
    uow.subscriptionLinksChanged();
    const statusChanged: string[] = [];
    for (const r of due) {
      const start = starts[r.renewal as Exclude<Renewal, 'no_reset'>];
      const to = currentStatus(
        {
          status: r.status,
          used_bytes: 0,
          traffic_limit_bytes: r.traffic_limit_bytes === null ? null : Number(r.traffic_limit_bytes),
          expires_at: r.expires_at,
        },
        now,
      );
      await trx
        .updateTable('subscriptions')
        .set({ period_started_at: start, status: to, updated_at: now })
        .where('id', '=', r.id)
        .execute();
      await zeroPeriodCounters(trx, [r.id]);
      if (to !== r.status) statusChanged.push(r.id);
      uow.audit({
        action: 'subscription.period_reset',
        entity_type: 'subscription',
        entity_id: r.id,
        details: {
          renewal: r.renewal,
          used_bytes: Number(r.used_bytes),
          period_started_at: start.toISOString(),
          ...(to !== r.status ? { status: { from: r.status, to } } : {}),
        },
      });
    }
    await bumpNodeRevisions(uow, await nodesOfSubscriptions(trx, statusChanged));
    return due.length;
  });
}

import type { SubscriptionStatus } from '@svc/db';
import { sql } from 'kysely';
import type { DomainEvent } from '../events/catalogue.ts';
import { nodesOfSubscriptions } from '../fleet/revisions.ts';
import type { UnitOfWork } from '../shared/unit-of-work.ts';
import { sameSet } from '../subscriptions/access-groups.ts';
import { newCredentials } from '../subscriptions/credentials.ts';
import { recheckLimitsAfterCommit } from '../subscriptions/limits.ts';
import { regroupSubscription } from '../subscriptions/regroup-subscription.ts';
import { subscriptionChangeEvents } from '../subscriptions/subscription-events.ts';
import { type SubscriptionWithCounters, subscriptionsWithCounters, zeroPeriodCounters } from '../subscriptions/subscription-rows.ts';
import { isAdminDisabled, subscriptionStatus } from '../subscriptions/subscription-status.ts';
import { groupIdsOf } from '../subscriptions/subscription-view.ts';
import type { SubscriptionBulkAction } from './bulk-input.ts';
import type { ChunkDeps, ChunkResult } from './chunk.ts';

const DAY = 86_400_000;

interface Next {
  expires_at: Date | null;
  traffic_limit_bytes: number | null;
  used_bytes: number;
  status: SubscriptionStatus;
}

/** The fields an action gives one subscription, its status by the one rule (subscriptionStatus). */
function nextOf(r: SubscriptionWithCounters, action: SubscriptionBulkAction, now: Date): Next {
  let expires = r.expires_at;
  let limit = r.traffic_limit_bytes === null ? null : Number(r.traffic_limit_bytes);
  let used = Number(r.used_bytes);
  let disabled = isAdminDisabled(r);
  switch (action.type) {
    case 'extend_expiry':
      if (expires !== null) expires = new Date(Math.max(now.getTime(), expires.getTime()) + action.days * DAY);
      break;
    case 'add_traffic':
      if (limit !== null) limit = Math.min(Number.MAX_SAFE_INTEGER, limit + action.bytes);
      break;
    case 'set_traffic':
      limit = action.traffic_limit_bytes;
      break;
    case 'reset_usage':
      used = 0;
      break;
    case 'set_status':
      disabled = action.status === 'disabled';
      break;
    default:
      break;
  }
  return {
    expires_at: expires,
    traffic_limit_bytes: limit,
    used_bytes: used,
    status: subscriptionStatus({ admin_disabled: disabled, used_bytes: used, traffic_limit_bytes: limit, expires_at: expires }, now),
  };
}

const CHANGED_FIELDS: Record<SubscriptionBulkAction['type'], string[]> = {
  extend_expiry: ['expires_at'],
  add_traffic: ['traffic_limit_bytes'],
  set_traffic: ['traffic_limit_bytes'],
  reset_usage: ['used_bytes'],
  set_status: ['status'],
  set_access_groups: ['access_group_ids'],
  rotate_credentials: ['credentials'],
  delete: [],
};

/**
 * One chunk of a subscription bulk job, in the chunk's unit of work: the subscriptions locked,
 * the action applied to each by the rules the single verbs use (the status rule, the change
 * events, regrouping with its grace, new credentials), one audit entry per subscription naming
 * the job, and the nodes the changes reach returned (not bumped: the job bumps each once at its
 * end). Subscriptions gone since the job was made are returned as skipped.
 */
export async function applySubscriptionChunk(
  uow: UnitOfWork,
  deps: ChunkDeps,
  jobId: string,
  action: SubscriptionBulkAction,
  ids: readonly string[],
  now: Date,
): Promise<ChunkResult> {
  const trx = uow.db;
  // The counters rows are locked too only where the action writes them (reset_usage): a usage
  // credit does not wait on the other actions.
  const rows = await subscriptionsWithCounters(trx)
    .where('id', 'in', ids)
    .orderBy('id')
    .forUpdate(action.type === 'reset_usage' ? ['subscriptions', 'sc'] : 'subscriptions')
    .execute();
  const found = new Set(rows.map((r) => r.id));
  const skipped = ids.filter((id) => !found.has(id));
  if (rows.length === 0) return { skipped, nodes: [], events: [] };
  uow.subscriptionLinksChanged();
  const present = rows.map((r) => r.id);
  const events: DomainEvent[] = [];
  const nodes = new Set<string>();
  const subject = (r: SubscriptionWithCounters) => ({ subscription_id: r.id, client_id: r.client_id });
  const audit = (r: SubscriptionWithCounters, details: Record<string, unknown>) =>
    uow.audit({
      action: `subscription.bulk_${action.type}`,
      entity_type: 'subscription',
      entity_id: r.id,
      details: { bulk_job_id: jobId, ...details },
    });

  if (action.type === 'delete') {
    for (const n of await nodesOfSubscriptions(trx, present)) nodes.add(n);
    await trx.deleteFrom('subscriptions').where('id', 'in', present).execute();
    for (const r of rows) {
      audit(r, { client_id: r.client_id, status: r.status });
      events.push({ type: 'subscription.deleted', payload: { ...subject(r), status: r.status } });
    }
    return { skipped, nodes: [...nodes], events };
  }

  if (action.type === 'rotate_credentials') {
    for (const n of await nodesOfSubscriptions(trx, present)) nodes.add(n);
    for (const r of rows) {
      const { credentials } = newCredentials(deps.secrets);
      await trx
        .updateTable('subscriptions')
        .set({ ...credentials, credentials_rotated_at: now, updated_at: now })
        .where('id', '=', r.id)
        .execute();
      audit(r, {});
      events.push({ type: 'subscription.credentials_rotated', payload: subject(r) });
    }
    await trx
      .updateTable('imported_users')
      .set({ links_retired_at: now })
      .where('subscription_id', 'in', present)
      .where('links_retired_at', 'is', null)
      .execute();
    return { skipped, nodes: [...nodes], events };
  }

  if (action.type === 'set_access_groups') {
    const before = await groupIdsOf(trx, present);
    const moved = rows.filter((r) => !sameSet(before.get(r.id) ?? [], action.access_group_ids));
    const movedIds = moved.map((r) => r.id);
    for (const n of await nodesOfSubscriptions(trx, movedIds)) nodes.add(n);
    for (const r of moved) {
      const from = before.get(r.id) ?? [];
      const to = await regroupSubscription(uow, now, r.id, from, action.access_group_ids);
      audit(r, { access_group_ids: { from, to } });
      events.push({
        type: 'subscription.updated',
        payload: { ...subject(r), changed: ['access_group_ids'], status: r.status, bulk_job_id: jobId },
      });
    }
    for (const n of await nodesOfSubscriptions(trx, movedIds)) nodes.add(n);
    if (movedIds.length) await trx.updateTable('subscriptions').set({ updated_at: now }).where('id', 'in', movedIds).execute();
    return { skipped, nodes: [...nodes], events };
  }

  // Field changes: the next fields of each, written in one statement.
  const next = rows.map((r) => ({ r, n: nextOf(r, action, now) }));
  await sql`
    update subscriptions s
       set expires_at = v.expires_at, traffic_limit_bytes = v.traffic_limit_bytes, status = v.status, updated_at = ${now}
      from unnest(${next.map((x) => x.r.id)}::text[], ${next.map((x) => x.n.expires_at?.toISOString() ?? null)}::timestamptz[],
                  ${next.map((x) => (x.n.traffic_limit_bytes === null ? null : String(x.n.traffic_limit_bytes)))}::int8[],
                  ${next.map((x) => x.n.status)}::text[])
           as v(id, expires_at, traffic_limit_bytes, status)
     where s.id = v.id`.execute(trx);
  if (action.type === 'reset_usage') await zeroPeriodCounters(trx, present);
  // Except for reset_usage, used_bytes was read without locking the counters: judged again after commit.
  else
    recheckLimitsAfterCommit(
      uow,
      next.map((x) => ({ id: x.r.id, from: x.r, to: x.n })),
    );
  // A new status changes who the nodes serve; a new expiry their user_limits' not_after_ms (issue 36).
  const statusChanged = next
    .filter((x) => x.n.status !== x.r.status || x.n.expires_at?.getTime() !== x.r.expires_at?.getTime())
    .map((x) => x.r.id);
  for (const n of await nodesOfSubscriptions(trx, statusChanged)) nodes.add(n);
  for (const { r, n } of next) {
    audit(r, {
      ...(n.expires_at?.getTime() !== r.expires_at?.getTime()
        ? { expires_at: { from: r.expires_at?.toISOString() ?? null, to: n.expires_at?.toISOString() ?? null } }
        : {}),
      ...(action.type === 'add_traffic' || action.type === 'set_traffic'
        ? {
            traffic_limit_bytes: { from: r.traffic_limit_bytes === null ? null : Number(r.traffic_limit_bytes), to: n.traffic_limit_bytes },
          }
        : {}),
      ...(action.type === 'reset_usage' ? { used_bytes: Number(r.used_bytes) } : {}),
      ...(n.status !== r.status ? { status: { from: r.status, to: n.status } } : {}),
    });
    events.push(
      {
        type: 'subscription.updated',
        payload: { ...subject(r), changed: CHANGED_FIELDS[action.type], status: n.status, bulk_job_id: jobId },
      },
      ...subscriptionChangeEvents({ id: r.id, client_id: r.client_id, from: r, to: n }),
    );
  }
  return { skipped, nodes: [...nodes], events };
}

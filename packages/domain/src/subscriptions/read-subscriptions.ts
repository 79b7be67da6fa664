import type { SubscriptionStatus } from '@svc/db';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { keysetRows, type Page, type PageRequest, toPage } from '../shared/pagination.ts';
import {
  groupIdsOf,
  linkOf,
  mayReadLinks,
  type SubscriptionReadView,
  type SubscriptionView,
  subscriptionReadView,
  subscriptionView,
} from './subscription-view.ts';

export interface SubscriptionFilter extends PageRequest {
  client_id?: string | undefined;
  /** The status as computed now, like the view shows it. */
  status?: SubscriptionStatus | undefined;
}

type ReadCtx = Pick<DomainContext, 'db' | 'clock' | 'secrets' | 'config' | 'actor'>;

/**
 * Oldest first, by id (keyset). The stored status is right as of the last write; only time
 * moves it without a write (expiry), so the filter corrects for expires_at <= now, and
 * each filter value still starts from the (status, id) index.
 */
export async function listSubscriptions(ctx: ReadCtx, f: SubscriptionFilter): Promise<Page<SubscriptionReadView>> {
  const now = ctx.clock.now();
  let q = ctx.db.selectFrom('subscriptions').selectAll();
  if (f.client_id) q = q.where('client_id', '=', f.client_id);
  switch (f.status) {
    case undefined:
      break;
    case 'disabled':
      q = q.where('status', '=', 'disabled');
      break;
    case 'expired':
      q = q.where((eb) =>
        eb.or([eb('status', '=', 'expired'), eb.and([eb('status', 'in', ['active', 'limited']), eb('expires_at', '<=', now)])]),
      );
      break;
    default:
      q = q.where('status', '=', f.status).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
  }
  const rows = await keysetRows(q, f);
  const groups = await groupIdsOf(
    ctx.db,
    rows.slice(0, f.limit).map((r) => r.id),
  );
  return toPage(rows, f.limit, (r) => subscriptionReadView(ctx, r, groups.get(r.id) ?? [], now));
}

export async function getSubscription(ctx: ReadCtx, id: string): Promise<SubscriptionReadView> {
  const row = await ctx.db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('subscription', id);
  const groups = await groupIdsOf(ctx.db, [id]);
  return subscriptionReadView(ctx, row, groups.get(id) ?? [], ctx.clock.now());
}

/** The view a write answers with (link included: only owners and admins write), read as it is. */
export async function writtenSubscription(ctx: ReadCtx, id: string): Promise<SubscriptionView> {
  const row = await ctx.db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('subscription', id);
  const groups = await groupIdsOf(ctx.db, [id]);
  return subscriptionView(ctx, row, groups.get(id) ?? [], ctx.clock.now());
}

/** GET /subscriptions/{id}/link: only for callers who may read links (a viewer gets 403). */
export async function getSubscriptionLink(ctx: ReadCtx, id: string): Promise<{ url: string }> {
  if (!mayReadLinks(ctx.actor))
    throw new ForbiddenError('reading a subscription link needs the owner or admin role: the link is full proxy access');
  const row = await ctx.db.selectFrom('subscriptions').select('token_enc').where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('subscription', id);
  return { url: linkOf(ctx, row) };
}

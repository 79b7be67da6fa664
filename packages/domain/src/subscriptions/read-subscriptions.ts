import type { SubscriptionStatus } from '@svc/db';
import { sql } from 'kysely';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { type ListPage, type ListRequest, type ListSpec, listPage, type SearchBranch, searchTerms } from '../shared/list-query.ts';
import { subscriptionsWithCounters } from './subscription-rows.ts';
import { CLOCK_EXPIRES } from './subscription-status.ts';
import {
  groupIdsOf,
  linkOf,
  mayReadLinks,
  type SubscriptionReadView,
  type SubscriptionView,
  subscriptionReadView,
  subscriptionView,
} from './subscription-view.ts';

export interface SubscriptionFilter extends ListRequest {
  client_id?: string | undefined;
  /** The status as computed now, like the view shows it. */
  status?: SubscriptionStatus | undefined;
}

type ReadCtx = Pick<DomainContext, 'db' | 'clock' | 'secrets' | 'config' | 'actor'>;

/** Never-expiring subscriptions sort after every date (the expiry index has the same expression). */
const EXPIRY_ORDER = sql`coalesce(expires_at, '9999-12-31T00:00:00Z'::timestamptz)`;

export const SUBSCRIPTION_LIST: ListSpec = {
  idColumn: 'id',
  defaultSort: 'created',
  sorts: { expires: { expr: EXPIRY_ORDER, kind: 'timestamptz' }, used: { expr: sql`used_bytes`, kind: 'bigint' } },
};

/**
 * Oldest first by default, by id (keyset); by expiry (never last) or this period's traffic.
 * `q` matches an id or the client's email by its start, and from 3 characters anywhere in
 * the client's email or the note. The stored status is right as of the last write; only time
 * moves it without a write (expiry), so the filter corrects for expires_at <= now, and
 * each filter value still starts from the (status, id) index.
 */
export async function listSubscriptions(ctx: ReadCtx, f: SubscriptionFilter): Promise<ListPage<SubscriptionReadView>> {
  const now = ctx.clock.now();
  const { q, anyOf } = subscriptionsMatching(ctx, f, now);
  return listPage(
    ctx.db,
    q,
    f,
    SUBSCRIPTION_LIST,
    async (rows) => {
      const groups = await groupIdsOf(
        ctx.db,
        rows.map((r) => r.id),
      );
      return rows.map((r) => subscriptionReadView(ctx, r, groups.get(r.id) ?? [], now));
    },
    anyOf,
  );
}

/**
 * The subscriptions a list filter selects (client_id, status as of `now`, q): the list's
 * query and its search branches (a row matches when any branch does). The list pages it; a
 * bulk action takes every id of it.
 */
export function subscriptionsMatching(
  ctx: Pick<ReadCtx, 'db'>,
  f: Omit<SubscriptionFilter, keyof ListRequest> & { q?: string | undefined },
  now: Date,
) {
  let q = subscriptionsWithCounters(ctx.db);
  if (f.client_id) q = q.where('client_id', '=', f.client_id);
  switch (f.status) {
    case undefined:
      break;
    case 'disabled':
      q = q.where('status', '=', 'disabled');
      break;
    case 'expired':
      q = q.where((eb) => eb.or([eb('status', '=', 'expired'), eb.and([eb('status', 'in', CLOCK_EXPIRES), eb('expires_at', '<=', now)])]));
      break;
    default:
      // Not expired yet, said as a range of the expiry index (never-expiring rows sort last):
      // `active` sorted by expiry starts after the expired rows instead of filtering them.
      q = q.where('status', '=', f.status).where(sql<boolean>`${EXPIRY_ORDER} > ${now}`);
  }
  const terms = searchTerms(f.q);
  const anyOf: SearchBranch[] | undefined = terms && [
    (b) => b.where('id', 'like', terms.prefix),
    (b) =>
      b.where(
        'client_id',
        'in',
        ctx.db
          .selectFrom('clients')
          .select('clients.id')
          .where('clients.email', 'like', terms.substring ? terms.contains : terms.prefix),
      ),
    ...(terms.substring ? [(b: Parameters<SearchBranch>[0]) => b.where('note', 'ilike', terms.contains)] : []),
  ];
  return { q, anyOf };
}

export async function getSubscription(ctx: ReadCtx, id: string): Promise<SubscriptionReadView> {
  const row = await subscriptionsWithCounters(ctx.db).where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('subscription', id);
  const groups = await groupIdsOf(ctx.db, [id]);
  return subscriptionReadView(ctx, row, groups.get(id) ?? [], ctx.clock.now());
}

/** The view a write answers with (link included: only owners and admins write), read as it is. */
export async function writtenSubscription(ctx: ReadCtx, id: string): Promise<SubscriptionView> {
  const row = await subscriptionsWithCounters(ctx.db).where('id', '=', id).executeTakeFirst();
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

import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { rotateSubscriptionCredentials } from '../subscriptions/rotate-credentials.ts';
import { type SubscriptionWithCounters, subscriptionsWithCounters } from '../subscriptions/subscription-rows.ts';
import { linkOf } from '../subscriptions/subscription-view.ts';
import { getSubscriptionUsage, type UsageQuery, type UsageView } from '../subscriptions/usage.ts';
import { portalClient } from './portal-client.ts';
import { type PortalClientView, type PortalSubscriptionView, portalClientView, portalSubscriptionView } from './portal-views.ts';

/** A portal use case runs as the client of the access token (ctx.actor: type client). */
type PortalCtx = DomainContext & { actor: { type: 'client'; id: string } };

const clientOf = (ctx: PortalCtx): string => ctx.actor.id;

/**
 * The client's own subscription, or 404: another client's id answers exactly like an id that
 * does not exist (nothing tells a customer which ids are taken).
 */
async function ownSubscription(ctx: PortalCtx, id: string): Promise<SubscriptionWithCounters> {
  await portalClient(ctx, clientOf(ctx));
  const row = await subscriptionsWithCounters(ctx.db).where('id', '=', id).where('client_id', '=', clientOf(ctx)).executeTakeFirst();
  if (!row) throw new NotFoundError('subscription', id);
  return row;
}

/** GET /portal/v1/me: the client and every subscription of theirs (oldest first). */
export async function portalMe(ctx: PortalCtx): Promise<{ client: PortalClientView; subscriptions: PortalSubscriptionView[] }> {
  const client = await portalClient(ctx, clientOf(ctx));
  const rows = await subscriptionsWithCounters(ctx.db).where('client_id', '=', client.id).orderBy('id').execute();
  const now = ctx.clock.now();
  return { client: portalClientView(client), subscriptions: rows.map((r) => portalSubscriptionView(r, now)) };
}

/** GET /portal/v1/subscriptions/{id}/usage: the admin series (hour/day/month), own subscription only. */
export async function portalSubscriptionUsage(ctx: PortalCtx, id: string, query: UsageQuery): Promise<UsageView> {
  await ownSubscription(ctx, id);
  return getSubscriptionUsage(ctx, id, query);
}

/** GET /portal/v1/subscriptions/{id}/link. */
export async function portalSubscriptionLink(ctx: PortalCtx, id: string): Promise<{ url: string }> {
  return { url: linkOf(ctx, await ownSubscription(ctx, id)) };
}

/** POST /portal/v1/subscriptions/{id}/rotate-credentials: new credentials and link; the old link stops at once. */
export async function portalRotateCredentials(ctx: PortalCtx, id: string): Promise<PortalSubscriptionView & { link: string }> {
  await ownSubscription(ctx, id);
  const view = await rotateSubscriptionCredentials(ctx, id);
  const row = await subscriptionsWithCounters(ctx.db).where('id', '=', id).executeTakeFirstOrThrow();
  return { ...portalSubscriptionView(row, ctx.clock.now()), link: view.link };
}

export type { PortalCtx };

import type { Db } from '@svc/db';
import { NotFoundError } from '../errors.ts';
import { type SubscriptionWithCounters, subscriptionsWithCounters } from './subscription-rows.ts';

/**
 * The subscription row locked until the unit ends, read with its counters. Only the
 * subscription row is locked: a usage credit (which writes the counters row) does not wait on
 * an edit, and an edit reads the counters as the last committed credit left them.
 */
export async function lockSubscription(trx: Db, id: string): Promise<SubscriptionWithCounters> {
  const row = await subscriptionsWithCounters(trx).where('id', '=', id).forUpdate('subscriptions').executeTakeFirst();
  if (!row) throw new NotFoundError('subscription', id);
  return row;
}

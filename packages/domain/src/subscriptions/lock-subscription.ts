import type { Db, SubscriptionRow } from '@svc/db';
import { NotFoundError } from '../errors.ts';

export async function lockSubscription(trx: Db, id: string): Promise<SubscriptionRow> {
  const row = await trx.selectFrom('subscriptions').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  if (!row) throw new NotFoundError('subscription', id);
  return row;
}

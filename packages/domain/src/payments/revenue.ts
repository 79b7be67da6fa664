import { sql } from 'kysely';
import type { DomainContext } from '../shared/context.ts';

export interface RevenueLine {
  /** ISO 4217. */
  currency: string;
  /** Minor units taken and kept: payments paid in the period and not refunded. */
  amount: number;
  payments: number;
  /** Minor units of payments paid in the period and refunded since. */
  refunded_amount: number;
  refunds: number;
}

/**
 * Revenue of payments paid (paid_at) in [from, to), one line per currency (amounts of
 * different currencies are never added up), sorted by currency.
 */
export async function revenueOf(ctx: Pick<DomainContext, 'db'>, from: Date, to: Date): Promise<RevenueLine[]> {
  const rows = await ctx.db
    .selectFrom('payments')
    .select([
      'currency',
      sql<string>`coalesce(sum(amount) filter (where status = 'succeeded'), 0)`.as('amount'),
      sql<string>`count(*) filter (where status = 'succeeded')`.as('payments'),
      sql<string>`coalesce(sum(amount) filter (where status = 'refunded'), 0)`.as('refunded_amount'),
      sql<string>`count(*) filter (where status = 'refunded')`.as('refunds'),
    ])
    .where('status', 'in', ['succeeded', 'refunded'])
    .where('paid_at', '>=', from)
    .where('paid_at', '<', to)
    .groupBy('currency')
    .orderBy('currency')
    .execute();
  return rows.map((r) => ({
    currency: r.currency,
    amount: Number(r.amount),
    payments: Number(r.payments),
    refunded_amount: Number(r.refunded_amount),
    refunds: Number(r.refunds),
  }));
}

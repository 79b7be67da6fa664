import type { Db, PaymentRow, PaymentStatus } from '@svc/db';
import { sql } from 'kysely';
import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { type ListPage, type ListRequest, type ListSpec, listPage, type SearchBranch, searchTerms } from '../shared/list-query.ts';

/** Payments are written by checkout, provider webhooks, the worker's re-reads and admins' manual settling (payments/). */
export interface PaymentView {
  id: string;
  client_id: string;
  /** The client's email as it is now: whom the operator writes to, whose transfer to look for. */
  client_email: string;
  plan_id: string;
  provider_id: string;
  subscription_id: string | null;
  /** Minor units of `currency`. */
  amount: number;
  currency: string;
  status: PaymentStatus;
  provider_payment_id: string | null;
  /** Why the status is what it is, in words (failed, expired, canceled, refunded). */
  status_reason: string | null;
  /**
   * When the payment stops being waited for: the provider's expiry when it named one; for a
   * manual payment, its deadline (billing.manual_max_days after the checkout), when it expires
   * unconfirmed. Null for other providers that named none (billing.pending_max_hours applies).
   */
  expires_at: string | null;
  paid_at: string | null;
  /** When the plan was applied to the subscription, and when a refund took it back. */
  applied_at: string | null;
  reverted_at: string | null;
  created_at: string;
  updated_at: string;
}

/** The Idempotency-Key and the checkout URL stay internal. */
export const paymentView = (r: PaymentRow, clientEmail: string): PaymentView => ({
  id: r.id,
  client_id: r.client_id,
  client_email: clientEmail,
  plan_id: r.plan_id,
  provider_id: r.provider_id,
  subscription_id: r.subscription_id,
  amount: Number(r.amount),
  currency: r.currency,
  status: r.status,
  provider_payment_id: r.provider_payment_id,
  status_reason: r.status_reason,
  expires_at: r.expires_at?.toISOString() ?? null,
  paid_at: r.paid_at?.toISOString() ?? null,
  applied_at: r.applied_at?.toISOString() ?? null,
  reverted_at: r.reverted_at?.toISOString() ?? null,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

export interface PaymentFilter extends ListRequest {
  client_id?: string | undefined;
  status?: PaymentStatus | undefined;
  provider_id?: string | undefined;
  subscription_id?: string | undefined;
  plan_id?: string | undefined;
  /** created_at >= from. */
  from?: Date | undefined;
  /** created_at < to. */
  to?: Date | undefined;
}

/** A payment with its client's email: a payment's client is never deleted (payments.client_id restricts it). */
const withClientEmail = (db: Db) =>
  db
    .selectFrom('payments')
    .innerJoin('clients', 'clients.id', 'payments.client_id')
    .selectAll('payments')
    .select('clients.email as client_email');

export const PAYMENT_LIST: ListSpec = {
  idColumn: 'payments.id',
  defaultSort: 'created',
  sorts: { amount: { expr: sql`payments.amount`, kind: 'bigint' } },
};

/**
 * Oldest first by default, by id; or by amount. `q` matches a payment id or the client's
 * email by its start, the provider's payment id exactly, and from 3 characters anywhere in
 * the client's email.
 */
export async function listPayments(ctx: Pick<DomainContext, 'db'>, f: PaymentFilter): Promise<ListPage<PaymentView>> {
  let q = withClientEmail(ctx.db);
  if (f.client_id !== undefined) q = q.where('payments.client_id', '=', f.client_id);
  if (f.status !== undefined) q = q.where('payments.status', '=', f.status);
  if (f.provider_id !== undefined) q = q.where('payments.provider_id', '=', f.provider_id);
  if (f.subscription_id !== undefined) q = q.where('payments.subscription_id', '=', f.subscription_id);
  if (f.plan_id !== undefined) q = q.where('payments.plan_id', '=', f.plan_id);
  if (f.from !== undefined) q = q.where('payments.created_at', '>=', f.from);
  if (f.to !== undefined) q = q.where('payments.created_at', '<', f.to);
  const terms = searchTerms(f.q);
  const anyOf: SearchBranch[] | undefined = terms && [
    (b) => b.where('payments.id', 'like', terms.prefix),
    (b) => b.where('payments.provider_payment_id', '=', terms.text),
    (b) => b.where('clients.email', 'like', terms.substring ? terms.contains : terms.prefix),
  ];
  return listPage(ctx.db, q, f, PAYMENT_LIST, (rows) => rows.map((r) => paymentView(r, r.client_email)), anyOf);
}

export async function getPayment(ctx: Pick<DomainContext, 'db'>, id: string): Promise<PaymentView> {
  const row = await withClientEmail(ctx.db).where('payments.id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('payment', id);
  return paymentView(row, row.client_email);
}

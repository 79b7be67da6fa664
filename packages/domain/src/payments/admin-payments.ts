import type { PaymentStatus } from '@svc/db';
import type { PaymentView } from '../billing/read-payments.ts';
import { paymentView } from '../billing/read-payments.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { paymentTransition } from './payment-transition.ts';
import { settlePayment } from './settle-payment.ts';

/** What an admin may do to a manual payment, and the status each action reports. */
const ACTIONS = { confirm: 'succeeded', cancel: 'canceled', refund: 'refunded' } as const;
export type ManualPaymentAction = keyof typeof ACTIONS;

/**
 * POST /payments/{id}/confirm | cancel | refund: an admin settles a payment of a manual
 * provider (bank transfer, cash) through the same rule a webhook does. Payments of the other
 * kinds are settled by their provider (409: the provider's own dashboard refunds, and its
 * webhook tells us). A move the rule does not allow (confirming a refunded payment, refunding a
 * pending one) is 409 naming the status; doing the same action twice answers the payment as it
 * is (a retried request is harmless).
 */
export async function settleManualPayment(ctx: DomainContext, id: string, action: ManualPaymentAction): Promise<PaymentView> {
  return unitOfWork(ctx, async (uow) => {
    const row = await uow.db.selectFrom('payments').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!row) throw new NotFoundError('payment', id);
    const provider = await uow.db
      .selectFrom('payment_providers')
      .select('kind')
      .where('id', '=', row.provider_id)
      .executeTakeFirstOrThrow();
    if (provider.kind !== 'manual')
      throw new ConflictError(`a ${provider.kind} payment is settled by its provider, not by hand`, {
        provider_id: 'not a manual provider',
      });
    const client = await uow.db.selectFrom('clients').select('email').where('id', '=', row.client_id).executeTakeFirstOrThrow();
    const to: PaymentStatus = ACTIONS[action];
    if (row.status === to) return paymentView(row, client.email);
    const allowed = paymentTransition(row.status, to) !== null && !(action === 'refund' && row.status !== 'succeeded');
    if (!allowed) throw new ConflictError(`a ${row.status} payment cannot be ${to}`, { status: row.status });
    const settled = await settlePayment(ctx, uow, row, { status: to }, 'admin');
    return paymentView(settled.payment, client.email);
  });
}

import type { WebhookRequest } from '../billing/providers/port.ts';
import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { newId } from '../shared/ids.ts';
import { JOBS } from '../shared/jobs.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { providerPort } from './provider-port.ts';

/** What the ingress answers a verified webhook with (always 200). */
export type WebhookReceipt =
  | { received: 'stored'; event_id: string }
  | { received: 'duplicate'; event_id: string }
  | { received: 'ignored'; event_id: string; reason: string };

/**
 * POST /webhooks/payments/{provider} (spec 4.5): `{provider}` is the id of a stored payment
 * provider. The provider's adapter verifies the request (signature, timestamp, source address,
 * or a re-read from its API): a refusal throws (400: nothing is stored). A verified payment
 * event is stored once per (provider, event id), whatever the number of deliveries, and a
 * `payments.process-event` job applies it after commit; the worker's payments sweep picks up an
 * event whose job was lost (a crash between the two). Unknown, disabled and manual providers
 * answer 404 (a disabled provider's late webhooks are retried by the provider until it is
 * enabled again; its pending payments are still re-read by the worker).
 */
export async function receivePaymentWebhook(ctx: DomainContext, providerId: string, req: WebhookRequest): Promise<WebhookReceipt> {
  const provider = await ctx.db.selectFrom('payment_providers').selectAll().where('id', '=', providerId).executeTakeFirst();
  if (!provider || !provider.enabled) throw new NotFoundError('payment provider', providerId);
  const port = providerPort(ctx, provider);
  if (!port.acceptsWebhooks) throw new NotFoundError('webhook endpoint of this payment provider');
  const event = await port.verifyWebhook(req);
  if (event.type === 'ignored') return { received: 'ignored', event_id: event.event_id, reason: event.reason };
  return unitOfWork(ctx, async (uow) => {
    const now = ctx.clock.now();
    const id = newId('pev', now.getTime());
    const stored = await uow.db
      .insertInto('payment_events')
      .values({
        id,
        provider_id: provider.id,
        event_id: event.event_id,
        payment_id: event.payment_id ?? null,
        provider_payment_id: event.provider_payment_id,
        status: event.status,
        amount: event.amount ?? null,
        currency: event.currency ?? null,
        occurred_at: event.occurred_at ? new Date(event.occurred_at) : null,
        received_at: now,
        processed_at: null,
        outcome: null,
      })
      .onConflict((oc) => oc.columns(['provider_id', 'event_id']).doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!stored) return { received: 'duplicate' as const, event_id: event.event_id };
    uow.enqueue(JOBS.paymentsProcessEvent, { id }, { id: `payment-event:${id}` });
    return { received: 'stored' as const, event_id: event.event_id };
  });
}

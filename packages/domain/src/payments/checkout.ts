import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PaymentRow } from '@svc/db';
import { z } from 'zod';
import { spendBudget } from '../auth/rate-limit.ts';
import { UnavailableError, UnprocessableError, ValidationError } from '../errors.ts';
import { portalClient } from '../portal/portal-client.ts';
import type { PortalCtx } from '../portal/portal-subscriptions.ts';
import { RefId } from '../shared/fields.ts';
import { newId } from '../shared/ids.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { makeProviderCheckout } from './checkout-at-provider.ts';
import { type CheckoutView, checkoutView } from './checkout-view.ts';

/** POST /portal/v1/checkout body (spec 2.2 "checkout request"). */
export const CheckoutInput = z
  .object({
    plan_id: RefId,
    provider_id: RefId,
    subscription_id: RefId.optional().meta({ description: 'one of yours to extend; absent: a new subscription when the payment succeeds' }),
  })
  .strict()
  .brand<'CheckoutInput'>();
export type CheckoutInput = z.output<typeof CheckoutInput>;

/** The Idempotency-Key header: 1-255 printable ASCII characters (a UUID is the usual choice). */
export const IdempotencyKey = z
  .string()
  .min(1, 'required')
  .max(255, 'must be at most 255 characters')
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');

/** A request that took on creating the provider's checkout and then went silent this long has died: another may take over. */
export const CHECKOUT_CLAIM_STALE_MS = 30_000;
/** How long a request with the same key waits for the one creating the checkout. */
const WAIT_FOR_OTHER_MS = 20_000;

/** Same key and same body: the SHA-256 of the body's fields, in a fixed order. */
export const checkoutRequestHash = (input: CheckoutInput): string =>
  createHash('sha256')
    .update(JSON.stringify([input.plan_id, input.provider_id, input.subscription_id ?? null]))
    .digest('hex');

/**
 * POST /portal/v1/checkout (spec 4.6, 8): one payment per client and Idempotency-Key.
 * - First request: the plan (not archived, not free), the provider (enabled, of this
 *   installation) and the subscription (the client's own) are checked, the payment is stored
 *   pending with the key and the body's hash (unique per client: of two racing requests one
 *   inserts, the other finds its row), then the provider's checkout is created and its URL
 *   stored. The provider gets an idempotency key derived from the payment id, so a takeover
 *   after a crash gets the same checkout back where the provider supports one.
 * - Same key, same body: the same answer (`replayed`), once the checkout exists; while another
 *   request is still creating it, this one waits for it (or takes over from one that died).
 * - Same key, another body: 422, nothing changes. Another client's key is another checkout.
 * - A provider that fails: 503/504 and the payment stays without a checkout; the same key
 *   tries again. A provider that answers with another payment's checkout: 502, the same
 *   (makeProviderCheckout).
 * - New checkouts per client are limited (rate_limits.checkout, 429); replays are not counted.
 */
export async function startCheckout(
  ctx: PortalCtx,
  key: string,
  input: CheckoutInput,
): Promise<{ checkout: CheckoutView; replayed: boolean }> {
  const parsedKey = IdempotencyKey.safeParse(key);
  if (!parsedKey.success)
    throw new ValidationError('invalid Idempotency-Key', { 'Idempotency-Key': parsedKey.error.issues[0]?.message ?? 'invalid' });
  const client = await portalClient(ctx, ctx.actor.id);
  const hash = checkoutRequestHash(input);
  const existing = await byKey(ctx, client.id, key);
  let row: PaymentRow;
  let inserted = false;
  if (existing) row = existing;
  else {
    // Each new checkout makes one at the provider: a client gets so many an hour (a replay is free).
    await spendBudget(ctx, `checkout:${client.id}`, ctx.config.rate_limits.checkout);
    const made = await insertPayment(ctx, client.id, key, hash, input);
    row = made.row;
    inserted = made.inserted;
  }
  if (row.request_hash !== hash)
    throw new UnprocessableError('this Idempotency-Key was used with another request body; use a new key for a new checkout', {
      'Idempotency-Key': 'already used with another body',
    });
  if (inserted) return { checkout: await makeProviderCheckout(ctx, row, client.email), replayed: false };

  const deadline = Date.now() + WAIT_FOR_OTHER_MS;
  for (;;) {
    if (row.provider_payment_id !== null || row.status !== 'pending') return { checkout: checkoutView(row), replayed: true };
    const claimed = await claim(ctx, row.id);
    if (claimed) return { checkout: await makeProviderCheckout(ctx, claimed, client.email), replayed: true };
    if (Date.now() > deadline)
      throw new UnavailableError('the checkout for this Idempotency-Key is still being created; retry with the same key', 2);
    await sleep(100);
    row = (await byKey(ctx, client.id, key)) ?? row;
  }
}

const byKey = (ctx: PortalCtx, clientId: string, key: string) =>
  ctx.db.selectFrom('payments').selectAll().where('client_id', '=', clientId).where('idempotency_key', '=', key).executeTakeFirst();

async function insertPayment(
  ctx: PortalCtx,
  clientId: string,
  key: string,
  hash: string,
  input: CheckoutInput,
): Promise<{ row: PaymentRow; inserted: boolean }> {
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const now = ctx.clock.now();
    const errors: Record<string, string> = {};
    const plan = await trx.selectFrom('plans').selectAll().where('id', '=', input.plan_id).forKeyShare().executeTakeFirst();
    if (!plan || plan.archived) errors.plan_id = 'no such plan on sale';
    else if (Number(plan.price) <= 0) errors.plan_id = 'the plan is free: nothing to pay';
    const provider = await trx
      .selectFrom('payment_providers')
      .selectAll()
      .where('id', '=', input.provider_id)
      .forKeyShare()
      .executeTakeFirst();
    if (!provider || !provider.enabled) errors.provider_id = 'no such payment method';
    if (input.subscription_id !== undefined) {
      const sub = await trx
        .selectFrom('subscriptions')
        .select('id')
        .where('id', '=', input.subscription_id)
        .where('client_id', '=', clientId)
        .forKeyShare()
        .executeTakeFirst();
      // Another client's subscription reads exactly like one that does not exist.
      if (!sub) errors.subscription_id = 'no such subscription of yours';
    }
    if (Object.keys(errors).length > 0 || !plan || !provider) throw new ValidationError('the checkout cannot be made', errors);
    const id = newId('pay', now.getTime());
    const insertedRow = await trx
      .insertInto('payments')
      .values({
        id,
        client_id: clientId,
        plan_id: plan.id,
        provider_id: provider.id,
        subscription_id: input.subscription_id ?? null,
        amount: Number(plan.price),
        currency: plan.currency,
        status: 'pending',
        provider_payment_id: null,
        idempotency_key: key,
        request_hash: hash,
        checkout_started_at: now,
        checkout_url: null,
        instructions: null,
        expires_at: null,
        status_reason: null,
        paid_at: null,
        applied_at: null,
        reverted_at: null,
        applied_effect: null,
        next_check_at: null,
        created_at: now,
        updated_at: now,
      })
      // A racing request with the same key waits here for the first to commit, then inserts nothing.
      .onConflict((oc) => oc.columns(['client_id', 'idempotency_key']).where('idempotency_key', 'is not', null).doNothing())
      .returningAll()
      .executeTakeFirst();
    if (!insertedRow) {
      const other = await trx
        .selectFrom('payments')
        .selectAll()
        .where('client_id', '=', clientId)
        .where('idempotency_key', '=', key)
        .executeTakeFirstOrThrow();
      return { row: other, inserted: false };
    }
    uow.audit({
      action: 'payment.created',
      entity_type: 'payment',
      entity_id: id,
      details: {
        plan_id: plan.id,
        provider_id: provider.id,
        subscription_id: input.subscription_id ?? null,
        amount: Number(plan.price),
        currency: plan.currency,
      },
    });
    return { row: insertedRow, inserted: true };
  });
}

/** Takes on creating the checkout of a payment nobody is creating (or whose creator died). */
async function claim(ctx: PortalCtx, id: string): Promise<PaymentRow | undefined> {
  const now = ctx.clock.now();
  return ctx.db
    .updateTable('payments')
    .set({ checkout_started_at: now })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('provider_payment_id', 'is', null)
    .where((eb) =>
      eb.or([eb('checkout_started_at', 'is', null), eb('checkout_started_at', '<', new Date(now.getTime() - CHECKOUT_CLAIM_STALE_MS))]),
    )
    .returningAll()
    .executeTakeFirst();
}

import {
  CheckoutInput,
  newId,
  type PortalCtx,
  parseInput,
  processPaymentEvent,
  SYSTEM,
  settleManualPayment,
  startCheckout,
  withActor,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures, TEST_OWNER } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Exactly once under concurrency (PostgreSQL runs these truly at once; PGlite one after the
// other): the job and the sweep processing one stored event together, or an admin's confirm
// sent several times at once, apply the plan once.
let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

async function pendingManualPayment(): Promise<{ clientId: string; paymentId: string; providerId: string }> {
  const make = fixtures(bed.ctx());
  const client = await make.client();
  await bed.deps.db.updateTable('clients').set({ email_verified_at: bed.clock.now() }).where('id', '=', client.id).execute();
  const plan = await make.plan();
  const provider = await make.paymentProvider({ enabled: true });
  const portal = withActor(bed.deps, { type: 'client', id: client.id }) as PortalCtx;
  const { checkout } = await startCheckout(
    portal,
    `key-${client.id}`,
    parseInput(CheckoutInput, { plan_id: plan.id, provider_id: provider.id }),
  );
  return { clientId: client.id, paymentId: checkout.payment_id, providerId: provider.id };
}

const subscriptionsOf = (clientId: string) =>
  bed.deps.db.selectFrom('subscriptions').select('id').where('client_id', '=', clientId).execute();

describe('settling a payment exactly once', () => {
  it('one stored event processed by five at once: one applies it, the rest find it processed; one subscription', async () => {
    const { clientId, paymentId, providerId } = await pendingManualPayment();
    const id = newId('pev', bed.clock.now().getTime());
    // The row the ingress stores for a verified event (the manual kind has no webhooks of its own).
    await bed.deps.db
      .insertInto('payment_events')
      .values({
        id,
        provider_id: providerId,
        event_id: 'evt-concurrent',
        payment_id: paymentId,
        provider_payment_id: `manual_${paymentId}`,
        status: 'succeeded',
        amount: 990,
        currency: 'EUR',
        occurred_at: null,
        received_at: bed.clock.now(),
        processed_at: null,
        outcome: null,
      })
      .execute();
    const ctx = withActor(bed.deps, SYSTEM);
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => processPaymentEvent(ctx, id)));
    expect(outcomes.filter((o) => o !== null)).toEqual(['applied']);
    expect(await subscriptionsOf(clientId)).toHaveLength(1);
    const pay = await bed.deps.db.selectFrom('payments').selectAll().where('id', '=', paymentId).executeTakeFirstOrThrow();
    expect(pay.status).toBe('succeeded');
  });

  it("an admin's confirm sent five times at once: one subscription, one payment.succeeded audit entry", async () => {
    const { clientId, paymentId } = await pendingManualPayment();
    const ctx = bed.ctx(TEST_OWNER);
    const views = await Promise.all(Array.from({ length: 5 }, () => settleManualPayment(ctx, paymentId, 'confirm')));
    expect(new Set(views.map((v) => v.status))).toEqual(new Set(['succeeded']));
    expect(new Set(views.map((v) => v.applied_at)).size).toBe(1);
    expect(await subscriptionsOf(clientId)).toHaveLength(1);
    const audit = await bed.deps.db
      .selectFrom('audit_log')
      .select('action')
      .where('entity_id', '=', paymentId)
      .where('action', '=', 'payment.succeeded')
      .execute();
    expect(audit).toHaveLength(1);
  });
});

import {
  CheckoutInput,
  dispatchEvents,
  getPayment,
  listPayments,
  type MailMessage,
  type PortalCtx,
  parseInput,
  recheckPayment,
  settleManualPayment,
  startCheckout,
  withActor,
} from '@svc/domain';
import { fixtures, until } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { actorOf } from '../admins/an-owner.ts';
import { mailTestbed } from '../support.ts';

// Issue 28 item 5: a manual payment waits for an admin, and nobody but this event tells one
// that it exists. Its deadline (billing.manual_max_days, 3 days here) is its expires_at.
const DAY_MS = 86_400_000;
const t = mailTestbed({ SVC_BILLING_MANUAL_MAX_DAYS: '3' });
const { mails } = t;

async function manualCheckout(opts: { key?: string; extend?: boolean } = {}) {
  const make = fixtures(t.bed.ctx());
  const client = await make.client();
  await t.bed.deps.db.updateTable('clients').set({ email_verified_at: t.bed.clock.now() }).where('id', '=', client.id).execute();
  const plan = await make.plan({ name: 'Monthly', price: 1250, currency: 'EUR' });
  const provider = await make.paymentProvider({ name: 'Bank transfer', enabled: true });
  const subscription = opts.extend ? await make.subscription({ client_id: client.id }) : undefined;
  const portal = withActor(t.bed.deps, { type: 'client', id: client.id }) as PortalCtx;
  const input = parseInput(CheckoutInput, {
    plan_id: plan.id,
    provider_id: provider.id,
    ...(subscription ? { subscription_id: subscription.id } : {}),
  });
  const key = opts.key ?? `key-${client.id}`;
  const { checkout } = await startCheckout(portal, key, input);
  return { client, plan, provider, checkout, again: () => startCheckout(portal, key, input) };
}

const awaitingEvents = (paymentId: string) =>
  t.bed.deps.db
    .selectFrom('events')
    .selectAll()
    .where('type', '=', 'payment.awaiting_confirmation')
    .where('payload', '@>', JSON.stringify({ payment_id: paymentId }) as never)
    .execute();

describe('a manual checkout raises payment.awaiting_confirmation', () => {
  it('in its unit of work, with what an owner needs to act: who pays, what for, how much, through what, by when', async () => {
    const { client, plan, provider, checkout } = await manualCheckout();
    const deadline = new Date(new Date(checkout.created_at).getTime() + 3 * DAY_MS).toISOString();
    expect(checkout.expires_at).toBe(deadline);
    const events = await awaitingEvents(checkout.payment_id);
    expect(events.map((e) => e.payload)).toEqual([
      {
        payment_id: checkout.payment_id,
        client_id: client.id,
        client_email: client.email,
        plan_id: plan.id,
        plan_name: 'Monthly',
        provider_id: provider.id,
        provider_name: 'Bank transfer',
        subscription_id: null,
        amount: 1250,
        currency: 'EUR',
        expires_at: deadline,
      },
    ]);
  });

  it('once per payment: the same Idempotency-Key again answers the same checkout and raises nothing more', async () => {
    const { checkout, again } = await manualCheckout();
    const replay = await again();
    expect(replay).toMatchObject({ replayed: true, checkout: { payment_id: checkout.payment_id } });
    expect(await awaitingEvents(checkout.payment_id)).toHaveLength(1);
  });

  it('names the subscription a payment extends', async () => {
    const { checkout } = await manualCheckout({ extend: true });
    const [event] = await awaitingEvents(checkout.payment_id);
    expect((event?.payload as { subscription_id: string }).subscription_id).toBe(checkout.subscription_id);
    expect(checkout.subscription_id).toMatch(/^sub_/);
  });

  it('owners are mailed about it by default (notify.email_events): what to do, and the links to do it', async () => {
    const owner = await fixtures(t.bed.ctx()).admin({ role: 'owner' });
    const viewer = await fixtures(t.bed.ctx()).admin({ role: 'viewer' });
    expect(t.bed.deps.config.notify.email_events).toContain('payment.awaiting_confirmation');
    const { client, checkout } = await manualCheckout();
    await dispatchEvents(t.bed.deps);
    const ours = () =>
      mails.find(
        (m) => m.to === owner.email && m.category === 'event:payment.awaiting_confirmation' && m.text.includes(checkout.payment_id),
      );
    await until('the owner’s mail', () => ours() !== undefined);
    const mail = ours() as MailMessage;
    expect(mail.subject).toBe(`Payment to confirm: 12.50 EUR from ${client.email} (Bank transfer)`);
    expect(mail.text).toContain('When the money has arrived, confirm it');
    expect(mail.text).toContain(`Customer:    ${client.email} (${client.id})`);
    const deadline = checkout.expires_at ?? '';
    expect(mail.text).toContain(`Confirm by:  ${deadline.slice(0, 10)} ${deadline.slice(11, 16)} UTC, in 3 days (unconfirmed`);
    expect(mail.text).toContain(`POST https://cp.example.com/api/v1/payments/${checkout.payment_id}/confirm`);
    expect(mail.text).toContain(`POST https://cp.example.com/api/v1/payments/${checkout.payment_id}/cancel`);
    expect(mails.some((m) => m.to === viewer.email)).toBe(false);
  });
});

describe("the admin payment views show the client's email and the manual deadline", () => {
  it('list, get and a manual settle answer client_email and expires_at', async () => {
    const { client, checkout } = await manualCheckout();
    const listed = await listPayments(t.bed.ctx(), { limit: 10, client_id: client.id });
    expect(listed.items).toEqual([
      expect.objectContaining({ id: checkout.payment_id, client_email: client.email, expires_at: checkout.expires_at }),
    ]);
    expect(await getPayment(t.bed.ctx(), checkout.payment_id)).toMatchObject({
      client_id: client.id,
      client_email: client.email,
      expires_at: checkout.expires_at,
    });
    const owner = await fixtures(t.bed.ctx()).admin({ role: 'owner' });
    const canceled = await settleManualPayment(t.bed.ctx(actorOf(owner)), checkout.payment_id, 'cancel');
    expect(canceled).toMatchObject({ status: 'canceled', client_email: client.email });
  });

  it('the list pages by id across the join with clients (no repeats, no gaps)', async () => {
    for (let i = 0; i < 3; i++) await manualCheckout();
    const all = (await listPayments(t.bed.ctx(), { limit: 200 })).items.map((p) => p.id);
    const walked: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await listPayments(t.bed.ctx(), { limit: 2, ...(cursor ? { cursor } : {}) });
      walked.push(...page.items.map((p) => p.id));
      if (!page.next_cursor) break;
      cursor = page.next_cursor;
    }
    expect(walked).toEqual(all);
    expect(all.length).toBeGreaterThanOrEqual(3);
  });
});

describe('expires_at is the deadline the worker keeps', () => {
  it('still pending just before it; expired unconfirmed at it', async () => {
    const { checkout } = await manualCheckout();
    const at = new Date(checkout.expires_at as string).getTime();
    t.bed.clock.set(new Date(at - 1000));
    expect(await recheckPayment(t.bed.system(), checkout.payment_id)).toBe('pending');
    t.bed.clock.set(new Date(at));
    expect(await recheckPayment(t.bed.system(), checkout.payment_id)).toBe('expired');
  });
});

import {
  CheckoutInput,
  MagicLinkRequestInput,
  type PortalCtx,
  parseInput,
  requestMagicLink,
  settleManualPayment,
  startCheckout,
  withActor,
} from '@svc/domain';
import { fixtures } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { mailTestbed } from '../support.ts';

// Issue 28 item 9: customer mails say times as the /sub page and the portal say them
// (@svc/format): the moment in UTC and how far it is, to the nearest whole day.
const t = mailTestbed();
const { mailTo } = t;

async function confirmedPurchase() {
  const make = fixtures(t.bed.ctx());
  const client = await make.client();
  await t.bed.deps.db.updateTable('clients').set({ email_verified_at: t.bed.clock.now() }).where('id', '=', client.id).execute();
  const plan = await make.plan({ name: 'Monthly', duration_days: 30, traffic_limit_bytes: 50 * 2 ** 30 });
  const provider = await make.paymentProvider({ name: 'Bank transfer', enabled: true });
  const portal = withActor(t.bed.deps, { type: 'client', id: client.id }) as PortalCtx;
  const { checkout } = await startCheckout(
    portal,
    `key-${client.id}`,
    parseInput(CheckoutInput, { plan_id: plan.id, provider_id: provider.id }),
  );
  // The admin confirms a moment later: the 30 days run from the confirmation.
  t.bed.clock.advance(7_000);
  await settleManualPayment(t.bed.ctx(), checkout.payment_id, 'confirm');
  return { client, paymentId: checkout.payment_id };
}

describe('the payment receipt', () => {
  it('30 days bought now run "until <UTC moment> (in 30 days)", not 29', async () => {
    const { client } = await confirmedPurchase();
    const receipt = await mailTo(client.email, 'payment_succeeded');
    const until = new Date(t.bed.clock.now().getTime() + 30 * 86_400_000).toISOString();
    expect(receipt.text).toContain(`Your subscription now runs until ${until.slice(0, 10)} ${until.slice(11, 16)} UTC (in 30 days).`);
  });

  it('a refund that takes the whole time back says the subscription has ended, and when', async () => {
    const { client, paymentId } = await confirmedPurchase();
    t.bed.clock.advance(60_000);
    await settleManualPayment(t.bed.ctx(), paymentId, 'refund');
    const refund = await mailTo(client.email, 'payment_refunded');
    expect(refund.text).toMatch(/Your subscription has ended \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)\./);
  });
});

describe('the sign-in and confirmation mails', () => {
  it('say how long the link works in the formatter’s words: "for 15 minutes"', async () => {
    const client = await fixtures(t.bed.ctx()).client();
    const input = parseInput(MagicLinkRequestInput, { email: client.email });
    await (await requestMagicLink(t.bed.deps, input, { ip: '198.51.100.7', userAgent: null })).background;
    expect((await mailTo(client.email, 'magic_link')).text).toContain('The link works once, for 15 minutes.');
  });
});

import {
  CheckoutInput,
  JOBS,
  MagicLinkRequestInput,
  type MailMessage,
  type PortalCtx,
  parseInput,
  requestMagicLink,
  settleManualPayment,
  startCheckout,
  withActor,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures, until } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Issue 28 item 9: customer mails say times as the /sub page and the portal say them
// (@svc/format): the moment in UTC and how far it is, to the nearest whole day.
let bed: DomainTestbed;
const mails: MailMessage[] = [];
let stopMail: () => Promise<void>;
beforeAll(async () => {
  bed = await createDomainTestbed({ env: { SVC_PUBLIC_BASE_URL: 'https://cp.example.com' } });
  stopMail = await bed.deps.jobs.consume(JOBS.mailSend, async (m) => {
    mails.push(m);
  });
});
afterAll(async () => {
  await stopMail?.();
  await bed?.close();
});

const mailTo = async (email: string, category: string) => {
  await until(`a ${category} mail to ${email}`, () => mails.some((m) => m.to === email && m.category === category));
  return mails.filter((m) => m.to === email && m.category === category).at(-1) as MailMessage;
};

async function confirmedPurchase() {
  const make = fixtures(bed.ctx());
  const client = await make.client();
  await bed.deps.db.updateTable('clients').set({ email_verified_at: bed.clock.now() }).where('id', '=', client.id).execute();
  const plan = await make.plan({ name: 'Monthly', duration_days: 30, traffic_limit_bytes: 50 * 2 ** 30 });
  const provider = await make.paymentProvider({ name: 'Bank transfer', enabled: true });
  const portal = withActor(bed.deps, { type: 'client', id: client.id }) as PortalCtx;
  const { checkout } = await startCheckout(
    portal,
    `key-${client.id}`,
    parseInput(CheckoutInput, { plan_id: plan.id, provider_id: provider.id }),
  );
  // The admin confirms a moment later: the 30 days run from the confirmation.
  bed.clock.advance(7_000);
  await settleManualPayment(bed.ctx(), checkout.payment_id, 'confirm');
  return { client, paymentId: checkout.payment_id };
}

describe('the payment receipt', () => {
  it('30 days bought now run "until <UTC moment> (in 30 days)", not 29', async () => {
    const { client } = await confirmedPurchase();
    const receipt = await mailTo(client.email, 'payment_succeeded');
    const until = new Date(bed.clock.now().getTime() + 30 * 86_400_000).toISOString();
    expect(receipt.text).toContain(`Your subscription now runs until ${until.slice(0, 10)} ${until.slice(11, 16)} UTC (in 30 days).`);
  });

  it('a refund that takes the whole time back says the subscription has ended, and when', async () => {
    const { client, paymentId } = await confirmedPurchase();
    bed.clock.advance(60_000);
    await settleManualPayment(bed.ctx(), paymentId, 'refund');
    const refund = await mailTo(client.email, 'payment_refunded');
    expect(refund.text).toMatch(/Your subscription has ended \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)\./);
  });
});

describe('the sign-in and confirmation mails', () => {
  it('say how long the link works in the formatter’s words: "for 15 minutes"', async () => {
    const client = await fixtures(bed.ctx()).client();
    const input = parseInput(MagicLinkRequestInput, { email: client.email });
    await (await requestMagicLink(bed.deps, input, { ip: '198.51.100.7', userAgent: null })).background;
    expect((await mailTo(client.email, 'magic_link')).text).toContain('The link works once, for 15 minutes.');
  });
});

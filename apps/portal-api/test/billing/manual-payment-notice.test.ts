import { randomUUID } from 'node:crypto';
import { formatDateTimeUtc } from '@svc/format';
import { type ControlPlane, startControlPlane, until } from '@svc/testkit';
import { type StandIn, startStandIn } from '@svc/testkit/provider-stand-in';
import { type SmtpReceiver, startSmtpReceiver } from '@svc/testkit/smtp-receiver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Issue 28 item 5, as an operator meets it with `svc start` as a real process and a real SMTP
 * server: a customer checks out through a manual provider (bank transfer) and the owner hears of
 * it by mail without looking (payment.awaiting_confirmation is mailed by default), a webhook
 * receiver gets the event like every event, and the payment views show whose payment it is and
 * its deadline (billing.manual_max_days, 3 days here) in expires_at.
 */
const DAY_MS = 86_400_000;
let smtp: SmtpReceiver;
let hooks: StandIn;
let cp: ControlPlane;
beforeAll(async () => {
  smtp = await startSmtpReceiver();
  hooks = await startStandIn();
  hooks.handle(() => ({ status: 200, json: { ok: true } }));
  cp = await startControlPlane({ env: { SVC_SMTP_URL: smtp.url, SVC_BILLING_MANUAL_MAX_DAYS: '3' } });
}, 120_000);
afterAll(async () => {
  await cp?.stop();
  await hooks?.close();
  await smtp?.close();
});

const created = async (path: string, body: unknown) => {
  const res = await cp.api.post(path, body);
  expect(res.status, `${path} ${res.text}`).toBe(201);
  return res.body;
};
const mailTo = (to: string, subject: RegExp) => smtp.mails.find((m) => m.to.includes(to) && subject.test(m.headers.subject ?? ''));
async function mailed(to: string, subject: RegExp) {
  await until(`a mail to ${to}: ${subject}`, () => mailTo(to, subject) !== undefined, 30_000);
  return mailTo(to, subject) as SmtpReceiver['mails'][number];
}

/** A client made by the admin, signed in through the link mailed to them. */
async function signedInCustomer(): Promise<{ id: string; email: string; token: string }> {
  const client = await created('/api/v1/clients', { email: `payer-${randomUUID().slice(0, 8)}@example.com` });
  expect((await fetch(`${cp.http}/portal/v1/auth/magic-link`, post({ email: client.email }))).status).toBe(202);
  const link = (await mailed(client.email, /sign-in link/)).text.match(/https?:\/\/\S+/)?.[0] as string;
  const token = new URLSearchParams(new URL(link).hash.slice(1)).get('token');
  const pair = await fetch(`${cp.http}/portal/v1/auth/callback`, post({ token }));
  expect(pair.status).toBe(200);
  return { id: client.id, email: client.email, token: ((await pair.json()) as { access_token: string }).access_token };
}
const post = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

describe('a manual checkout tells the owner (svc start, SMTP)', () => {
  it('raises payment.awaiting_confirmation: the owner’s mail is delivered, a webhook receives it, and the payment views show the email and the deadline in expires_at', async () => {
    const owner = (await cp.api.get('/api/v1/auth/me')).body.email as string;
    const hook = await created('/api/v1/webhooks', { url: `${hooks.base}/hooks`, event_types: ['payment.awaiting_confirmation'] });
    const plan = await created('/api/v1/plans', { name: 'Monthly', price: 990, currency: 'EUR', duration_days: 30 });
    const provider = await created('/api/v1/payment-providers', {
      kind: 'manual',
      name: 'Bank transfer',
      enabled: true,
      config: { instructions: 'IBAN DE00 0000; reference: your email' },
    });
    const payer = await signedInCustomer();

    const res = await fetch(
      `${cp.http}/portal/v1/checkout`,
      post({ plan_id: plan.id, provider_id: provider.id }, { 'idempotency-key': randomUUID(), authorization: `Bearer ${payer.token}` }),
    );
    expect(res.status).toBe(201);
    const checkout = (await res.json()) as { payment_id: string; expires_at: string; created_at: string; instructions: string };
    const deadline = new Date(new Date(checkout.created_at).getTime() + 3 * DAY_MS).toISOString();
    expect(checkout).toMatchObject({ instructions: 'IBAN DE00 0000; reference: your email', expires_at: deadline });

    // The owner's mail, delivered by SMTP: what happened, what to do, the links to do it.
    const notice = await mailed(owner, /^Payment to confirm/);
    expect(notice.headers.subject).toBe(`Payment to confirm: 9.90 EUR from ${payer.email} (Bank transfer)`);
    expect(notice.text).toContain('When the money has arrived, confirm it');
    expect(notice.text).toContain(`Confirm by:  ${formatDateTimeUtc(deadline)}, in 3 days (unconfirmed`);
    expect(notice.text).toContain(`POST ${cp.http}/api/v1/payments/${checkout.payment_id}/confirm`);

    // Webhooks get it like every event, signed, with the catalogue's payload.
    await until('the webhook delivery', () => hooks.requests.some((r) => r.headers['x-svc-event'] === 'payment.awaiting_confirmation'));
    const delivery = hooks.requests.find((r) => r.headers['x-svc-event'] === 'payment.awaiting_confirmation');
    expect(delivery?.headers['x-svc-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(JSON.parse(delivery?.body as string).data).toEqual({
      payment_id: checkout.payment_id,
      client_id: payer.id,
      client_email: payer.email,
      plan_id: plan.id,
      plan_name: 'Monthly',
      provider_id: provider.id,
      provider_name: 'Bank transfer',
      subscription_id: null,
      amount: 990,
      currency: 'EUR',
      expires_at: deadline,
    });
    expect((await cp.api.get(`/api/v1/webhooks/${hook.id}/deliveries`)).body.items[0]).toMatchObject({
      event_type: 'payment.awaiting_confirmation',
    });

    // The admin's views: whose payment (the email), and by when.
    const listed = await cp.api.get(`/api/v1/payments?client_id=${payer.id}`);
    expect(listed.status).toBe(200);
    expect(listed.body.items).toEqual([
      expect.objectContaining({ id: checkout.payment_id, client_id: payer.id, client_email: payer.email, expires_at: deadline }),
    ]);
    const one = await cp.api.get(`/api/v1/payments/${checkout.payment_id}`);
    expect(one.body).toMatchObject({ client_email: payer.email, expires_at: deadline, status: 'pending' });
    // The payer's view shows the same deadline.
    const mine = await fetch(`${cp.http}/portal/v1/payments/${checkout.payment_id}`, {
      headers: { authorization: `Bearer ${payer.token}` },
    });
    expect(((await mine.json()) as { expires_at: string }).expires_at).toBe(deadline);

    const confirmed = await cp.api.post(`/api/v1/payments/${checkout.payment_id}/confirm`, undefined);
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ status: 'succeeded', client_email: payer.email });
  });
});

import { importLinkFor } from '@svc/client-apps';
import { type ControlPlane, fleetOverRest, startControlPlane } from '@svc/testkit';
import { type StripeStandIn, startStripeStandIn } from '@svc/testkit/stripe-stand-in';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { CHROMIUM, expectAccessible, launchBrowser, mailTo, openPage, shot, signInWithPassword } from './browser.ts';

/**
 * Buying in the portal (issue 32 item 4), in a real browser against the real system (`svc start`)
 * with Stripe played locally (its API and its hosted page; webhooks signed by the `stripe`
 * package): in mode open a customer registers, opens the link from the mail, has no
 * subscription, buys a plan by bank transfer (a manual provider; the purchase's Idempotency-Key
 * is sent again when the first answer is lost, and one payment is made), an admin confirms, and
 * the payment's page turns "paid" by itself; the new subscription shows its QR and connect
 * buttons whose links /sub answers. Renewal adds the plan's time to it. A card payment goes to
 * Stripe's page and back to the payment's page, which turns "paid" when the webhook lands.
 * Payment history and receipts; settings (password, theme); mode closed offers no registration.
 */

const GIB = 1024 ** 3;
const DAY_MS = 86_400_000;
const STRIPE_SECRET_KEY = 'sk_test_51PortalBuyingStandInKey000000000';
const STRIPE_WEBHOOK_SECRET = 'whsec_portalBuyingStandInSecret000000';
const ANDROID = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';
const BUYER = { email: 'buyer@example.com', password: 'buyer-password-1' };

const ok = <T extends { status: number; text: string }>(res: T, status = 200): T => {
  if (res.status !== status) throw new Error(`${res.status}: ${res.text}`);
  return res;
};

describe.skipIf(!CHROMIUM)('buying in the customer portal', () => {
  let cp: ControlPlane;
  let closed: ControlPlane;
  let stripe: StripeStandIn;
  let browser: Browser;
  let card: { id: string };
  beforeAll(async () => {
    stripe = await startStripeStandIn();
    [cp, closed, browser] = await Promise.all([
      startControlPlane({
        env: { SVC_PORTAL_REGISTRATION: 'open', SVC_MAIL_OUTBOX: 'true', SVC_BILLING_STRIPE_API_URL: stripe.base },
      }),
      startControlPlane({ env: { SVC_PORTAL_REGISTRATION: 'closed' } }),
      launchBrowser(),
    ]);
    const api = cp.api;
    const node = await fleetOverRest.createNode(api, { name: 'edge-shop' });
    const profile = await fleetOverRest.createInboundProfile(api, 'vless-tcp');
    const inbound = await fleetOverRest.createInbound(api, { nodeId: node.id, profileId: profile.id, port: 24490 });
    const group = await fleetOverRest.createAccessGroup(api, [inbound.id]);
    ok(
      await api.post('/api/v1/plans', {
        name: 'Monthly',
        price: 990,
        currency: 'EUR',
        duration_days: 30,
        traffic_limit_bytes: 50 * GIB,
        renewal: 'month',
        description: 'Servers in 3 countries\nUp to 5 devices',
        access_group_ids: [group.id],
      }),
      201,
    ).body;
    ok(
      await api.post('/api/v1/plans', { name: 'Yearly', price: 9900, currency: 'EUR', duration_days: 365, access_group_ids: [group.id] }),
      201,
    );
    ok(
      await api.post('/api/v1/payment-providers', {
        kind: 'manual',
        name: 'Bank transfer',
        enabled: true,
        config: { instructions: 'IBAN DE00 0000 0000; reference: your email' },
      }),
      201,
    );
    card = ok(
      await api.post('/api/v1/payment-providers', {
        kind: 'stripe',
        name: 'Card',
        enabled: true,
        config: { secret_key: STRIPE_SECRET_KEY, webhook_secret: STRIPE_WEBHOOK_SECRET },
      }),
      201,
    ).body;
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await Promise.all([cp?.stop(), closed?.stop()]);
    await stripe?.close();
  });

  /** The client's payments as the admin sees them. */
  const paymentsOf = async (email: string) => {
    const client = (await cp.api.get(`/api/v1/clients?email=${encodeURIComponent(email)}`)).body.items[0];
    return (await cp.api.get(`/api/v1/payments?client_id=${client.id}`)).body.items as {
      id: string;
      status: string;
      subscription_id: string | null;
    }[];
  };

  it('mode open: register, the link from the mail, no subscription; buy by bank transfer (one payment however often it is sent); confirmed, the page turns paid by itself; the subscription connects', async () => {
    const { context, page, errors } = await openPage(browser, { width: 390, height: 844, userAgent: ANDROID });
    onTestFailed(() => shot(page, 'buy-failed'));
    await page.goto(`${cp.http}/portal/`);
    await page.getByRole('link', { name: 'Register' }).click();
    await page.getByRole('heading', { name: 'Create an account' }).waitFor();
    await page.getByRole('textbox', { name: 'Email' }).fill(BUYER.email);
    await page.getByRole('textbox', { name: 'Choose a password' }).fill(BUYER.password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Confirm your email' }).waitFor();
    const mail = await mailTo(cp, BUYER.email, 'registration_confirmation');
    await page.goto(/https?:\/\/\S+/.exec(mail)?.[0] ?? 'about:blank');
    await page.getByTestId('magic-link-sign-in').click();
    await page.getByRole('heading', { name: 'My subscriptions' }).waitFor();
    await page.getByTestId('no-subscriptions').waitFor();
    await expectAccessible(page, 'home (nothing bought)');
    await shot(page, 'en-390-20-no-subscription');

    // The plans: price, how long, traffic and what the plan includes.
    await page.getByTestId('see-plans').click();
    await page.getByRole('heading', { name: 'Plans', level: 1 }).waitFor();
    const plan = page.getByTestId('plan').filter({ has: page.getByRole('heading', { name: 'Monthly' }) });
    expect(await plan.getByTestId('plan-price').textContent()).toBe('€9.90');
    expect(await plan.textContent()).toContain('for 30 days');
    expect(await plan.getByTestId('plan-facts').textContent()).toContain('50 GiB of traffic');
    expect(await plan.getByTestId('plan-facts').textContent()).toContain('Traffic resets on the 1st of each month (UTC).');
    expect(await plan.getByTestId('plan-description').textContent()).toBe('Servers in 3 countries\nUp to 5 devices');
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await expectAccessible(page, 'plans');
    await shot(page, 'en-390-21-plans');

    // Checkout: each enabled method; bank transfer; the first answer is lost on the way back.
    await plan.getByTestId('choose-plan').click();
    await page.getByRole('heading', { name: 'Checkout' }).waitFor();
    expect(await page.getByTestId('checkout-what').textContent()).toBe('A new subscription, ready as soon as the payment is confirmed.');
    // Each enabled method, by its name and what kind of payment it is.
    expect(await page.getByRole('radio').count()).toBe(2);
    await page.getByRole('radio', { name: 'Bank transfer' }).waitFor();
    await page.getByRole('radio', { name: 'Card' }).waitFor();
    await page.getByText('Pay as instructed; confirmed by hand').waitFor();
    await page.getByText('Card, on Stripe’s page').waitFor();
    await expectAccessible(page, 'checkout');
    await shot(page, 'en-390-22-checkout');
    const keys: string[] = [];
    let lose = true;
    await page.route('**/portal/v1/checkout', async (route) => {
      keys.push(route.request().headers()['idempotency-key'] ?? '');
      if (!lose) return route.continue();
      lose = false;
      // The server makes the payment; its answer never reaches the browser.
      await route.fetch();
      await route.abort('connectionreset');
    });
    await page.getByRole('radio', { name: /Bank transfer/ }).check();
    await page.getByTestId('pay').click();
    await page.getByTestId('checkout-error').waitFor();
    expect(await paymentsOf(BUYER.email)).toHaveLength(1);
    await page.getByTestId('pay').click();
    await page.waitForURL(/\/portal\/payments\/pay_/);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    const [payment] = await paymentsOf(BUYER.email);
    expect(await paymentsOf(BUYER.email)).toHaveLength(1);
    expect(new URL(page.url()).pathname).toBe(`/portal/payments/${payment?.id}`);

    // The payment's page: waiting for an admin, the instructions, the amount; it reads itself again.
    const outcome = page.getByTestId('payment-outcome');
    expect(await outcome.getAttribute('data-status')).toBe('pending');
    await outcome.getByText('Waiting for your payment to be confirmed').waitFor();
    expect(await page.getByTestId('instructions').textContent()).toBe('IBAN DE00 0000 0000; reference: your email');
    expect(await page.getByTestId('receipt-amount').textContent()).toBe('€9.90');
    await expectAccessible(page, 'payment (manual, pending)');
    await shot(page, 'en-390-23-payment-pending');
    ok(await cp.api.post(`/api/v1/payments/${payment?.id}/confirm`));
    // No reload: the page turns paid by itself.
    await page.getByTestId('payment-paid').waitFor({ timeout: 15_000 });
    expect(await outcome.getAttribute('data-status')).toBe('succeeded');
    expect(await page.getByTestId('receipt-number').textContent()).toBe(payment?.id);
    expect(await page.getByTestId('receipt-item').textContent()).toBe('Monthly');
    expect(await page.getByTestId('receipt-method').textContent()).toBe('Bank transfer');
    await page.getByTestId('print-receipt').waitFor();
    await expectAccessible(page, 'payment (paid, receipt)');
    await shot(page, 'en-390-24-payment-paid');

    // The new subscription: QR and connect buttons for this Android phone, each carrying the link /sub answers.
    await page.getByTestId('to-subscriptions').click();
    const sub = page.getByTestId('subscription');
    await sub.waitFor();
    expect(await sub.getByTestId('subscription-status').textContent()).toBe('Active');
    expect(await sub.getByTestId('subscription-traffic').textContent()).toContain('0 B of 50 GiB used');
    const link = (await sub.getByRole('img', { name: 'QR code of the subscription link' }).getAttribute('data-qr-value')) as string;
    expect(link).toMatch(new RegExp(`^${cp.http}/sub/[A-Za-z0-9_-]+$`));
    expect(await page.getByTestId('platform').inputValue()).toBe('android');
    // The profile is named for the brand (by default the installation's host name).
    const brand = (await page.getByTestId('brand').textContent()) as string;
    expect(brand).toBe('127.0.0.1');
    const adds = sub.getByTestId('add-to-app');
    expect(await adds.count()).toBeGreaterThan(1);
    for (const add of await adds.all()) {
      const app = (await add.evaluate((a) => a.closest('[data-app]')?.getAttribute('data-app'))) as string;
      expect(await add.getAttribute('href')).toBe(importLinkFor(app, link, brand));
    }
    expect((await fetch(link, { headers: { 'user-agent': 'v2rayNG/1.9.30' } })).status).toBe(200);
    await expectAccessible(page, 'home (bought)');
    await shot(page, 'en-390-25-bought');

    // Renewal: the plan it was bought with first; 30 more days once confirmed.
    const bought = (await paymentsOf(BUYER.email))[0]?.subscription_id;
    expect(bought).toMatch(/^sub_/);
    const before = (await cp.api.get(`/api/v1/subscriptions/${bought}`)).body;
    await sub.getByTestId('renew').click();
    await page.getByRole('heading', { name: 'Renew your subscription' }).waitFor();
    const first = page.getByTestId('plan').first();
    await first.getByTestId('current-plan').waitFor();
    expect(await first.getByRole('heading').textContent()).toBe('Monthly');
    await expectAccessible(page, 'plans (renew)');
    await first.getByTestId('choose-plan').click();
    await page.getByTestId('checkout-what').getByText('Adds 30 days to Subscription', { exact: false }).waitFor();
    await page.getByRole('radio', { name: /Bank transfer/ }).check();
    await page.getByTestId('pay').click();
    await page.waitForURL(/\/portal\/payments\/pay_/);
    const renewal = new URL(page.url()).pathname.split('/').at(-1) as string;
    expect(renewal).not.toBe(payment?.id);
    ok(await cp.api.post(`/api/v1/payments/${renewal}/confirm`));
    await page.getByTestId('payment-paid').waitFor({ timeout: 15_000 });
    const after = (await cp.api.get(`/api/v1/subscriptions/${before.id}`)).body;
    expect(new Date(after.expires_at).getTime() - new Date(before.expires_at).getTime()).toBe(30 * DAY_MS);

    // The history: newest first, each to its receipt.
    await page.getByTestId('nav-payments').click();
    await page.getByRole('heading', { name: 'Payments' }).waitFor();
    const rows = page.getByTestId('payment');
    expect(await rows.count()).toBe(2);
    expect(await rows.getByTestId('payment-status').allTextContents()).toEqual(['Paid', 'Paid']);
    expect(await rows.first().getByTestId('payment-link').getAttribute('href')).toBe(`/portal/payments/${renewal}`);
    await expectAccessible(page, 'payments');
    await shot(page, 'en-390-26-payments');
    await rows.last().getByTestId('payment-link').click();
    await page
      .getByTestId('receipt')
      .getByText(payment?.id as string)
      .waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  it('a card payment goes to Stripe’s page and back; the page turns paid by itself when the webhook lands', async () => {
    const { context, page, errors } = await openPage(browser, { width: 390, height: 844 });
    onTestFailed(() => shot(page, 'stripe-failed'));
    await page.goto(`${cp.http}/portal/plans`);
    // Signed out at a signed-in address: the sign-in form, then the screen asked for.
    await signInWithPassword(page, BUYER);
    await page.getByRole('heading', { name: 'Plans', level: 1 }).waitFor();
    await page
      .getByTestId('plan')
      .filter({ has: page.getByRole('heading', { name: 'Yearly' }) })
      .getByTestId('choose-plan')
      .click();
    await page.getByRole('radio', { name: /Card/ }).check();
    await page.getByTestId('pay').click();
    // Stripe's hosted page (the stand-in), then back.
    await page.waitForURL(`${stripe.base}/c/pay/**`);
    await page.getByRole('heading', { name: 'Pay 99.00 EUR' }).waitFor();
    const session = [...stripe.sessions.values()].at(-1);
    expect(session?.success_url).toMatch(new RegExp(`^${cp.http}/portal/payments/pay_[0-9a-z]+\\?outcome=success$`));
    await page.locator('#pay').click();
    await page.waitForURL(`${cp.http}/portal/payments/**`);
    const outcome = page.getByTestId('payment-outcome');
    await outcome.getByText('Waiting for the payment').waitFor();
    await outcome.getByText('The provider is confirming your payment', { exact: false }).waitFor();
    await expectAccessible(page, 'payment (card, confirming)');
    await shot(page, 'en-390-27-card-confirming');

    // Stripe reports the payment: the page, left alone, turns paid.
    const paid = stripe.pay(session?.id as string);
    const e = stripe.event('checkout.session.completed', { ...paid }, STRIPE_WEBHOOK_SECRET);
    const hook = await fetch(`${cp.http}/webhooks/payments/${card.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': e.header },
      body: e.payload,
    });
    expect(hook.status).toBe(200);
    await page.getByTestId('payment-paid').waitFor({ timeout: 20_000 });
    expect(await page.getByTestId('receipt-method').textContent()).toBe('Card');
    expect(await page.getByTestId('receipt-amount').textContent()).toBe('€99.00');
    await expectAccessible(page, 'payment (card, paid)');
    await shot(page, 'en-390-28-card-paid');
    // Two subscriptions now: the yearly one is a new one.
    await page.getByTestId('to-subscriptions').click();
    await page.getByRole('heading', { name: 'Subscription 2' }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  it('a canceled card payment says nothing was charged and offers the way back to the payment page', async () => {
    const { context, page, errors } = await openPage(browser, { width: 390, height: 844 });
    await page.goto(`${cp.http}/portal/`);
    await signInWithPassword(page, BUYER);
    await page.getByTestId('nav-plans').click();
    await page
      .getByTestId('plan')
      .filter({ has: page.getByRole('heading', { name: 'Monthly' }) })
      .getByTestId('choose-plan')
      .click();
    await page.getByRole('radio', { name: /Card/ }).check();
    await page.getByTestId('pay').click();
    await page.waitForURL(`${stripe.base}/c/pay/**`);
    await page.locator('#cancel').click();
    await page.waitForURL(`${cp.http}/portal/payments/**`);
    await page.getByTestId('payment-outcome').getByText('Payment not completed').waitFor();
    expect(await page.getByTestId('continue-payment').getAttribute('href')).toMatch(new RegExp(`^${stripe.base}/c/pay/cs_test_`));
    await expectAccessible(page, 'payment (canceled at the provider)');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('settings: a password changed (the old one stops), the colour scheme and the language remembered; Persian right to left', async () => {
    const { context, page, errors } = await openPage(browser, { width: 390, height: 844 });
    onTestFailed(() => shot(page, 'settings-failed'));
    await page.goto(`${cp.http}/portal/settings`);
    await signInWithPassword(page, BUYER);
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    await expectAccessible(page, 'settings');
    await shot(page, 'en-390-29-settings');
    const card = page.getByTestId('settings-password');
    await card.getByRole('textbox', { name: 'Current password' }).fill('not-my-password');
    await card.getByRole('textbox', { name: 'New password', exact: true }).fill('buyer-password-2');
    await card.getByRole('textbox', { name: 'Repeat the new password' }).fill('buyer-password-2');
    await card.getByTestId('save-password').click();
    await card.getByText('This is not your current password.').waitFor();
    await card.getByRole('textbox', { name: 'Current password' }).fill(BUYER.password);
    await card.getByTestId('save-password').click();
    await card.getByTestId('password-saved').waitFor();
    expect((await cp.api.post('/portal/v1/auth/login', { email: BUYER.email, password: BUYER.password })).status).toBe(401);
    expect((await cp.api.post('/portal/v1/auth/login', { email: BUYER.email, password: 'buyer-password-2' })).status).toBe(200);
    BUYER.password = 'buyer-password-2';

    // Dark, remembered over a reload; then Persian from the settings, right to left.
    await page.getByTestId('theme').getByText('Dark').click();
    expect(await page.evaluate('document.documentElement.getAttribute("data-mantine-color-scheme")')).toBe('dark');
    await page.reload();
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    expect(await page.evaluate('document.documentElement.getAttribute("data-mantine-color-scheme")')).toBe('dark');
    await page.getByTestId('settings-language').selectOption('fa');
    // Polled with evaluate: waitForFunction evaluates a string, which the portal's CSP (no unsafe-eval) refuses.
    await expect.poll(() => page.evaluate('document.documentElement.dir')).toBe('rtl');
    expect(await page.evaluate('document.documentElement.lang')).toBe('fa');
    // The signed-in screens' texts (a part of the catalogue fetched after sign-in) come in the new language too.
    await page.getByRole('heading', { name: 'تنظیمات', level: 1 }).waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await expectAccessible(page, 'settings (fa, dark)');
    await shot(page, 'fa-dark-390-04-settings');
    await page.getByTestId('nav-payments').click();
    await page.getByRole('heading', { name: 'پرداخت‌ها', level: 1 }).waitFor();
    await page.getByTestId('payment').first().waitFor();
    await expectAccessible(page, 'payments (fa, dark)');
    await shot(page, 'fa-dark-390-05-payments');
    await page.getByTestId('payment-link').first().click();
    await page.getByTestId('receipt').waitFor();
    // The payment number stays left to right inside the right-to-left receipt.
    expect(await page.getByTestId('receipt-number').locator('span').getAttribute('dir')).toBe('ltr');
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await expectAccessible(page, 'payment (fa, dark)');
    await shot(page, 'fa-dark-390-07-receipt');
    await page.getByTestId('nav-plans').click();
    await page.getByTestId('plan').first().waitFor();
    await expectAccessible(page, 'plans (fa, dark)');
    await shot(page, 'fa-dark-390-06-plans');
    await page.getByTestId('choose-plan').first().click();
    await page.getByTestId('pay').waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await expectAccessible(page, 'checkout (fa, dark)');
    await shot(page, 'fa-dark-390-08-checkout');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('mode closed: no way to register is offered, and the registration page says so', async () => {
    const { context, page, errors } = await openPage(browser, { width: 390, height: 844 });
    await page.goto(`${closed.http}/portal/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.getByRole('link', { name: 'Register' }).count()).toBe(0);
    expect(await page.getByText('No account yet?').count()).toBe(0);
    await page.goto(`${closed.http}/portal/register`);
    await page.getByText('Registration is closed. Ask your provider for an account.').waitFor();
    expect(await page.getByRole('button', { name: 'Create account' }).count()).toBe(0);
    await expectAccessible(page, 'register (closed)');
    await shot(page, 'en-390-30-registration-closed');
    expect(errors).toEqual([]);
    await context.close();
  });
});

import { importLinkFor } from '@svc/client-apps';
import { type ControlPlane, fleetOverRest, startControlPlane } from '@svc/testkit';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { CHROMIUM, expectAccessible, launchBrowser, mailTo, openPage, shot, signInWithPassword } from './browser.ts';

/**
 * The customer's path through the portal in a real browser against the real system (`svc start`
 * serving apps/portal-web at /portal/): an admin makes a client with a password and a
 * subscription; the customer signs in on a 390 px phone and sees its status, expiry, traffic,
 * link and QR; the session survives a reload only through the HttpOnly cookie and ends with
 * sign-out. A mailed sign-in link (read from <data_dir>/outbox) lands in the app and is spent
 * only by the button. Registration in mode application waits for approval. Persian is right to
 * left; the language choice sticks. axe (no serious or critical violation) on every screen.
 */

const GIB = 1024 ** 3;
const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
/** A 1×1 PNG: the operator's logo. */
const LOGO = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const BRAND = {
  name: 'Acme VPN',
  logo: LOGO,
  primary_color: '#f76707',
  support_url: 'https://help.example.com/',
  announcement: 'Maintenance on Sunday, 02:00 UTC.',
  apps: { ios: ['streisand', 'happ', 'shadowrocket'] },
  texts: { ru: { announcement: 'Профилактика в воскресенье, 02:00 UTC.' }, en: { welcome: 'Welcome to Acme VPN.' } },
};
/** The User-Agent each app fetches its subscription with. */
const APP_AGENT: Record<string, string> = { happ: 'Happ/3.16.0', streisand: 'Streisand/1.6.8', shadowrocket: 'Shadowrocket/2.2.60' };
const CUSTOMER = { email: 'customer@example.com', password: 'customer-password-1' };

/** The mail's link as it is: this app's landing page, the token in the fragment (/portal/auth/magic-link#token=…). */
function landingOf(cp: ControlPlane, mail: string): string {
  const url = /https?:\/\/\S+/.exec(mail)?.[0] ?? 'missing:';
  const link = new URL(url);
  expect(`${link.origin}${link.pathname}${link.search}`).toBe(`${cp.http}/portal/auth/magic-link`);
  expect(new URLSearchParams(link.hash.slice(1)).get('token')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return url;
}

describe.skipIf(!CHROMIUM)('the customer portal in a browser', () => {
  let cp: ControlPlane;
  let browser: Browser;
  let link: string;
  beforeAll(async () => {
    [cp, browser] = await Promise.all([
      startControlPlane({ env: { SVC_PORTAL_REGISTRATION: 'application', SVC_MAIL_OUTBOX: 'true' } }),
      launchBrowser(),
    ]);
    const api = cp.api;
    const node = await fleetOverRest.createNode(api, { name: 'edge-portal' });
    const profile = await fleetOverRest.createInboundProfile(api, 'vless-tcp');
    const inbound = await fleetOverRest.createInbound(api, { nodeId: node.id, profileId: profile.id, port: 24480 });
    const group = await fleetOverRest.createAccessGroup(api, [inbound.id]);
    const client = await api.post('/api/v1/clients', CUSTOMER);
    if (client.status !== 201) throw new Error(client.text);
    const expiresAt = new Date(Date.now() + 30 * 86_400_000 + 3_600_000).toISOString();
    const sub = await fleetOverRest.createSubscription(api, {
      clientId: client.body.id,
      accessGroupIds: [group.id],
      trafficLimitBytes: 50 * GIB,
      expiresAt,
    });
    link = sub.link;
    const renewal = await api.patch(`/api/v1/subscriptions/${sub.id}`, { renewal: 'month' });
    if (renewal.status !== 200) throw new Error(renewal.text);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await cp?.stop();
  });

  it('a customer signs in with the password on a phone and sees the subscription: status, expiry, traffic, link and QR', async () => {
    const { context, page, errors } = await openPage(browser, { width: 390, height: 844 });
    onTestFailed(() => shot(page, 'en-390-failed'));
    await page.goto(`${cp.http}/portal/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate('[document.documentElement.lang, document.documentElement.dir]')).toEqual(['en', 'ltr']);
    // Mode application with password sign-in: the password form first, the mailed link beside it, and a way to register.
    expect(await page.getByRole('link', { name: 'Register' }).isVisible()).toBe(true);
    expect(await page.getByRole('link', { name: 'Forgot your password?' }).isVisible()).toBe(true);
    await expectAccessible(page, 'sign-in (password)');
    await shot(page, 'en-390-01-sign-in');

    // A wrong password is said in words, on the form.
    await signInWithPassword(page, { ...CUSTOMER, password: 'not-the-password' });
    await page.getByRole('alert').getByText('Wrong email or password.').waitFor();

    await signInWithPassword(page, CUSTOMER);
    await page.getByRole('heading', { name: 'My subscriptions' }).waitFor();
    expect(await page.getByTestId('signed-in-as').textContent()).toBe(`Signed in as ${CUSTOMER.email}`);
    const card = page.getByTestId('subscription');
    expect(await card.count()).toBe(1);
    expect(await card.getByTestId('subscription-status').textContent()).toBe('Active');
    expect(await card.getByTestId('subscription-traffic').textContent()).toContain('0 B of 50 GiB used');
    expect(await card.getByRole('progressbar', { name: 'Traffic used of the limit' }).getAttribute('aria-valuenow')).toBe('0');
    expect(await card.getByTestId('subscription-traffic').textContent()).toContain('Traffic resets on the 1st of each month (UTC).');
    expect(await card.getByTestId('subscription-expiry').textContent()).toMatch(/^Expiresin 30 days · \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
    await card.getByTestId('subscription-link').getByText(link, { exact: true }).waitFor();
    const qr = card.getByRole('img', { name: 'QR code of the subscription link' });
    await qr.waitFor();
    expect(await qr.getAttribute('data-qr-value')).toBe(link);
    // Copy puts the link on the clipboard and says so.
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: cp.http });
    await card.getByTestId('copy-link').click();
    await card.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(link);
    // Nothing sticks out of a 390 px screen.
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await expectAccessible(page, 'home');
    await shot(page, 'en-390-02-home');

    // A reload signs in again through the HttpOnly cookie only: no token in any storage a script reads.
    await page.reload();
    await page.getByRole('heading', { name: 'My subscriptions' }).waitFor();
    expect(await page.evaluate('JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.cookie')).not.toMatch(
      /ey[A-Za-z0-9_-]{20,}/,
    );
    const cookies = await context.cookies();
    const refresh = cookies.find((c) => c.name.includes('portal_refresh'));
    expect(refresh).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/portal/v1/auth/refresh' });

    // Sign out: back to the sign-in screen, and a reload stays signed out (the cookie and the session are gone).
    await page.getByTestId('sign-out').click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  it('the same screens at 1280 px keep one centred column', async () => {
    const { context, page, errors } = await openPage(browser, { width: 1280 });
    onTestFailed(() => shot(page, 'en-1280-failed'));
    await page.goto(`${cp.http}/portal/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await shot(page, 'en-1280-01-sign-in');
    await signInWithPassword(page, CUSTOMER);
    await page.getByRole('heading', { name: 'My subscriptions' }).waitFor();
    await page.getByRole('img', { name: 'QR code of the subscription link' }).waitFor();
    const box = await page.locator('main').boundingBox();
    expect(box?.width).toBeLessThanOrEqual(640);
    expect(Math.abs((box?.x ?? 0) * 2 + (box?.width ?? 0) - 1280)).toBeLessThan(20);
    await expectAccessible(page, 'home (1280)');
    await shot(page, 'en-1280-02-home');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('in Persian (the browser’s language) every screen is right to left; a chosen language is remembered', async () => {
    for (const width of [390, 1280]) {
      const { context, page, errors } = await openPage(browser, { width, locale: 'fa-IR' });
      onTestFailed(() => shot(page, `fa-${width}-failed`));
      await page.goto(`${cp.http}/portal/`);
      await page.getByRole('heading', { name: 'ورود' }).waitFor();
      expect(await page.evaluate('[document.documentElement.lang, document.documentElement.dir]')).toEqual(['fa', 'rtl']);
      await expectAccessible(page, `sign-in (fa, ${width})`);
      await shot(page, `fa-${width}-01-sign-in`);
      await signInWithPassword(page, CUSTOMER, { email: 'ایمیل', password: 'گذرواژه', submit: 'ورود' });
      await page.getByRole('heading', { name: 'اشتراک‌های من' }).waitFor();
      expect(await page.getByTestId('subscription-status').textContent()).toBe('فعال');
      await page.getByRole('img', { name: 'کد QR پیوند اشتراک' }).waitFor();
      // The link stays left to right inside the right-to-left page.
      expect(await page.getByTestId('subscription-link').getAttribute('dir')).toBe('ltr');
      if (width === 390) expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      await expectAccessible(page, `home (fa, ${width})`);
      await shot(page, `fa-${width}-02-home`);
      expect(errors).toEqual([]);
      await context.close();
    }

    // An English browser picks Russian, then Chinese; the choice outlives a reload.
    const { context, page, errors } = await openPage(browser, { width: 390 });
    await page.goto(`${cp.http}/portal/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByTestId('language').selectOption('ru');
    await page.getByRole('heading', { name: 'Вход' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Вход' }).waitFor();
    expect(await page.evaluate('[document.documentElement.lang, document.documentElement.dir]')).toEqual(['ru', 'ltr']);
    await page.getByTestId('language').selectOption('zh');
    await page.getByRole('heading', { name: '登录' }).waitFor();
    await expectAccessible(page, 'sign-in (zh)');
    await shot(page, 'zh-390-01-sign-in');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('a mailed sign-in link lands in the app, spends nothing until the button is pressed, then signs in', async () => {
    const { context, page, errors } = await openPage(browser, { width: 390, height: 844 });
    onTestFailed(() => shot(page, 'link-failed'));
    await page.goto(`${cp.http}/portal/`);
    await page.getByText('Email link', { exact: true }).click();
    expect(new URL(page.url()).searchParams.get('with')).toBe('link');
    await expectAccessible(page, 'sign-in (link)');
    await page.getByRole('textbox', { name: 'Email' }).fill(CUSTOMER.email);
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await page.getByTestId('magic-link-sent').waitFor();
    await expectAccessible(page, 'link sent');
    await shot(page, 'en-390-03-link-sent');

    const landing = landingOf(cp, await mailTo(cp, CUSTOMER.email, '-magic_link-'));
    const callbacks: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/auth/callback')) callbacks.push(r.url());
    });
    await page.goto(landing);
    await page.getByRole('heading', { name: 'Sign in with your link' }).waitFor();
    // The token left the address bar; opening the page posted nothing (a mail scanner spends nothing).
    expect(new URL(page.url()).hash).toBe('');
    await page.waitForTimeout(300);
    expect(callbacks).toEqual([]);
    await expectAccessible(page, 'magic-link landing');
    await shot(page, 'en-390-04-magic-link');
    await page.getByTestId('magic-link-sign-in').click();
    await page.getByRole('heading', { name: 'My subscriptions' }).waitFor();
    expect(callbacks).toEqual([`${cp.http}/portal/v1/auth/callback?session=cookie`]);
    expect(new URL(page.url()).pathname).toBe('/portal/');

    // The same link again: spent, said so, with the way to a new one.
    await page.getByTestId('sign-out').click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.goto(landing);
    await page.getByTestId('magic-link-sign-in').click();
    await page.getByRole('alert').getByText('This link has already been used or has expired. Ask for a new one.').waitFor();
    await page.getByRole('link', { name: 'Email me a new link' }).waitFor();
    await expectAccessible(page, 'magic-link spent');
    // Without a token the page says what it needs.
    await page.goto(`${cp.http}/portal/auth/magic-link`);
    await page.getByText('This page needs the link from your email.', { exact: false }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  it('“forgot password” is the mailed link, said on the screen', async () => {
    const { context, page, errors } = await openPage(browser, { width: 390, height: 844 });
    await page.goto(`${cp.http}/portal/`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { name: 'Forgot your password?' }).waitFor();
    await page.getByText('we will email you a one-time sign-in link instead', { exact: false }).waitFor();
    await expectAccessible(page, 'forgot password');
    await shot(page, 'en-390-05-forgot');
    await page.getByRole('textbox', { name: 'Email' }).fill(CUSTOMER.email);
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await page.getByTestId('magic-link-sent').waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  it('registration in mode application: waiting for approval; the confirmation link confirms; approved, the password signs in', async () => {
    const applicant = { email: 'applicant@example.com', password: 'applicant-password-1' };
    const { context, page, errors } = await openPage(browser, { width: 390, height: 844 });
    onTestFailed(() => shot(page, 'register-failed'));
    await page.goto(`${cp.http}/portal/`);
    await page.getByRole('link', { name: 'Register' }).click();
    await page.getByRole('heading', { name: 'Create an account' }).waitFor();
    await page.getByText('New accounts are approved by an administrator.', { exact: false }).waitFor();
    await expectAccessible(page, 'register');
    await shot(page, 'en-390-06-register');
    // The taken email is said on its field.
    await page.getByRole('textbox', { name: 'Email' }).fill(CUSTOMER.email);
    await page.getByRole('textbox', { name: 'Choose a password' }).fill(applicant.password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('An account with this email already exists.', { exact: false }).waitFor();

    await page.getByRole('textbox', { name: 'Email' }).fill(applicant.email);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByTestId('waiting-for-approval').waitFor();
    await page.getByText('Confirm your email with the link we sent you.').waitFor();
    await expectAccessible(page, 'waiting (registered)');
    await shot(page, 'en-390-07-waiting');

    // The confirmation mail's link, in the browser that registered: confirmed, still waiting.
    await page.goto(landingOf(cp, await mailTo(cp, applicant.email, 'registration_confirmation')));
    await page.getByTestId('magic-link-sign-in').click();
    await page.getByTestId('waiting-for-approval').waitFor();
    await page.getByText('Your email is confirmed.').waitFor();

    // An admin approves; the password chosen at registration (kept by this browser's confirmation) signs in.
    const found = await cp.api.get(`/api/v1/clients?email=${encodeURIComponent(applicant.email)}`);
    const id = found.body.items[0].id as string;
    expect((await cp.api.post(`/api/v1/clients/${id}/approve`)).status).toBe(200);
    await page.goto(`${cp.http}/portal/`);
    await signInWithPassword(page, applicant);
    await page.getByRole('heading', { name: 'My subscriptions' }).waitFor();
    await page.getByTestId('no-subscriptions').waitFor();
    await expectAccessible(page, 'home (no subscriptions)');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('the operator’s brand; connect buttons for this device; a new link; sign out everywhere', async () => {
    const branded = await cp.api.patch('/api/v1/settings/customer-pages', BRAND);
    if (branded.status !== 200) throw new Error(branded.text);
    const { context, page, errors } = await openPage(browser, { width: 390, height: 844, userAgent: IPHONE });
    onTestFailed(() => shot(page, 'brand-failed'));
    await page.goto(`${cp.http}/portal/`);
    // The header shows the brand's name and logo; the page is titled with it; the announcement and the welcome show.
    await page.getByTestId('brand').getByText('Acme VPN').waitFor();
    expect(await page.getByTestId('brand-logo').getAttribute('src')).toBe(LOGO);
    // Polled with evaluate: waitForFunction evaluates a string, which the portal's CSP (no unsafe-eval) refuses.
    await expect.poll(() => page.evaluate('document.title')).toBe('Acme VPN');
    expect(await page.getByRole('complementary', { name: 'Announcement' }).textContent()).toBe(BRAND.announcement);
    expect(await page.getByTestId('welcome').textContent()).toBe('Welcome to Acme VPN.');
    expect(await page.getByTestId('support-link').getAttribute('href')).toBe(BRAND.support_url);
    // The primary colour is the operator's, darkened as far as white text on it needs (axe checks the contrast).
    const fill = await page
      .getByRole('button', { name: 'Sign in', exact: true })
      .evaluate((b) => (globalThis as unknown as Styled).getComputedStyle(b).backgroundColor);
    expect(fill).not.toBe('rgb(8, 111, 150)');
    expect(fill).toMatch(/^rgb\((\d+), (\d+), (\d+)\)$/);
    const [r, g, b] = (fill.match(/\d+/g) as string[]).map(Number) as [number, number, number];
    expect(r).toBeGreaterThan(g);
    expect(g).toBeGreaterThan(b);
    await expectAccessible(page, 'sign-in (branded)');
    await shot(page, 'en-390-08-branded-sign-in');

    await signInWithPassword(page, CUSTOMER);
    await page.getByRole('heading', { name: 'My subscriptions' }).waitFor();
    const card = page.getByTestId('subscription');
    await card.getByTestId('subscription-link').getByText(link, { exact: true }).waitFor();
    // An iPhone: the iOS apps in the brand's order, each "Add to" the catalogue's import link of this subscription.
    expect(await page.getByTestId('platform').inputValue()).toBe('ios');
    const apps = card.getByTestId('client-app');
    expect(await apps.evaluateAll((els) => els.map((e) => e.getAttribute('data-app')))).toEqual(BRAND.apps.ios);
    for (const id of BRAND.apps.ios) {
      const add = card.locator(`[data-app="${id}"]`).getByTestId('add-to-app');
      expect(await add.getAttribute('href')).toBe(importLinkFor(id, link, BRAND.name));
      expect((await add.textContent())?.startsWith('Add to ')).toBe(true);
      // What the app fetches from that link answers.
      const fetched = await fetch(link, { headers: { 'user-agent': APP_AGENT[id] as string } });
      expect(fetched.status).toBe(200);
    }
    await card.locator('[data-app="streisand"]').getByTestId('get-app').waitFor();
    // Traffic over time: a chart per day (none used yet: zero everywhere), per month at a switch.
    const chart = card.getByRole('img', { name: 'Chart of the traffic over time' });
    await chart.locator('canvas').waitFor();
    expect(await card.getByTestId('usage').getByText('0 B in this range').count()).toBe(1);
    await Promise.all([
      page.waitForResponse((r) => r.url().includes('/usage?granularity=month') && r.status() === 200),
      card.getByText('Month', { exact: true }).click(),
    ]);
    await chart.locator('canvas').waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await expectAccessible(page, 'home (branded, iOS)');
    await shot(page, 'en-390-09-connect-ios');

    // Windows: v2rayN has no link to tap; copy the link, then import it from the clipboard.
    await page.getByTestId('platform').selectOption('windows');
    const v2rayn = card.locator('[data-app="v2rayn"]');
    await v2rayn.waitFor();
    expect(await v2rayn.getByTestId('add-to-app').count()).toBe(0);
    await v2rayn.getByTestId('copy-for-app').waitFor();
    expect(await v2rayn.getByTestId('guide').textContent()).toContain('“Import Share Links from clipboard”');
    expect(await card.locator('[data-app="hiddify"]').getByTestId('add-to-app').getAttribute('href')).toBe(
      importLinkFor('hiddify', link, BRAND.name),
    );
    await expectAccessible(page, 'home (Windows)');
    await shot(page, 'en-390-10-connect-windows');

    // A new link: asked first; then the new link and QR, and the old one answers 404.
    await card.getByTestId('rotate').click();
    const dialog = page.getByRole('dialog', { name: 'Replace the link?' });
    await dialog.getByText('Every device that uses it must import the new link again.', { exact: false }).waitFor();
    await expectAccessible(page, 'rotate (confirm)');
    await shot(page, 'en-390-11-rotate-confirm');
    await dialog.getByTestId('rotate-confirm').click();
    await card.getByTestId('rotated').waitFor();
    const fresh = (await card.getByTestId('subscription-link').textContent()) as string;
    expect(fresh).not.toBe(link);
    expect(fresh).toMatch(/\/sub\/[A-Za-z0-9_-]+$/);
    expect(await card.getByRole('img', { name: 'QR code of the subscription link' }).getAttribute('data-qr-value')).toBe(fresh);
    expect(await card.locator('[data-app="hiddify"]').getByTestId('add-to-app').getAttribute('href')).toBe(
      importLinkFor('hiddify', fresh, BRAND.name),
    );
    expect((await fetch(link, { headers: { 'user-agent': 'Happ/3.16.0' } })).status).toBe(404);
    expect((await fetch(fresh, { headers: { 'user-agent': 'Happ/3.16.0' } })).status).toBe(200);
    link = fresh;
    await expectAccessible(page, 'home (rotated)');

    // Sign out everywhere: a second browser signed in meanwhile is signed out too.
    const other = await openPage(browser, { width: 1280 });
    await other.page.goto(`${cp.http}/portal/`);
    await signInWithPassword(other.page, CUSTOMER);
    await other.page.getByRole('heading', { name: 'My subscriptions' }).waitFor();
    await other.page.getByTestId('language').waitFor();
    await shot(other.page, 'en-1280-03-home-branded');
    // In the settings.
    await page.getByTestId('nav-settings').click();
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    await page.getByTestId('sign-out-everywhere').click();
    const ask = page.getByRole('dialog', { name: 'Sign out everywhere?' });
    await ask.waitFor();
    await expectAccessible(page, 'sign out everywhere (confirm)');
    await ask.getByTestId('sign-out-everywhere-confirm').click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await other.page.reload();
    await other.page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(errors).toEqual([]);
    expect(other.errors).toEqual([]);
    await other.context.close();
    await context.close();
  });

  it('branded, right to left: the connect buttons and the brand in Persian, light and dark', async () => {
    const runs = [
      { width: 390, colorScheme: 'light', name: 'fa-390' },
      { width: 1280, colorScheme: 'light', name: 'fa-1280' },
      { width: 390, colorScheme: 'dark', name: 'fa-dark-390' },
    ] as const;
    for (const { width, colorScheme, name } of runs) {
      const { context, page, errors } = await openPage(browser, { width, colorScheme, locale: 'fa-IR', userAgent: IPHONE });
      onTestFailed(() => shot(page, `${name}-brand-failed`));
      await page.goto(`${cp.http}/portal/`);
      await page.getByTestId('brand').getByText('Acme VPN').waitFor();
      await signInWithPassword(page, CUSTOMER, { email: 'ایمیل', password: 'گذرواژه', submit: 'ورود' });
      await page.getByRole('heading', { name: 'اشتراک‌های من' }).waitFor();
      await page.getByTestId('client-app').first().waitFor();
      expect(await page.getByTestId('add-to-app').first().textContent()).toBe('افزودن به Streisand');
      if (width === 390) expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      await expectAccessible(page, `home (fa, branded, ${name})`);
      await shot(page, `${name}-03-connect`);
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  it('a refused sign-in is said in the customer’s language by its code (an admin disabled the client)', async () => {
    const banned = { email: 'banned@example.com', password: 'banned-password-1' };
    const made = await cp.api.post('/api/v1/clients', banned);
    if (made.status !== 201) throw new Error(made.text);
    const off = await cp.api.patch(`/api/v1/clients/${made.body.id}`, { status: 'disabled' });
    if (off.status !== 200) throw new Error(off.text);
    const { context, page, errors } = await openPage(browser, { width: 390, height: 844, locale: 'ru-RU' });
    onTestFailed(() => shot(page, 'ru-refused-failed'));
    await page.goto(`${cp.http}/portal/`);
    await page.getByRole('heading', { name: 'Вход' }).waitFor();
    // The announcement in Russian replaces the default one.
    expect(await page.getByTestId('announcement').textContent()).toBe('Профилактика в воскресенье, 02:00 UTC.');
    await signInWithPassword(page, banned, { email: 'Эл. почта', password: 'Пароль', submit: 'Войти' });
    await page.getByRole('alert').getByText('Эта учётная запись отключена. Обратитесь к своему провайдеру.').waitFor();
    await expectAccessible(page, 'sign-in refused (ru)');
    await shot(page, 'ru-390-01-refused');
    expect(errors).toEqual([]);
    await context.close();
  });
});

/** The browser's getComputedStyle as these Node-typed tests name it inside evaluate (the tests' lib has no DOM). */
type Styled = { getComputedStyle(x: unknown): { backgroundColor: string } };

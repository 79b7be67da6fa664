import { type ControlPlane, startControlPlane } from '@svc/testkit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { CHROMIUM, launchBrowser, openPage, seriousViolations, shot } from './browser.ts';

/**
 * The customer pages' brand (issue 32 item 6) in a real browser against `svc start`: the owner
 * names the brand, uploads a logo (a file over 64 KiB is refused in the browser, before it is
 * sent), picks a colour and puts an iOS app first; the live preview shows it all before saving;
 * the save sends only what changed, and GET /portal/v1/branding answers it. A viewer reads the
 * screen without a way to change it. axe on it in English, at 390 px and in Persian.
 */

const OWNER = { email: 'brand-owner@example.com', password: 'brand-owner-password-1' };
const VIEWER = { email: 'brand-viewer@example.com', password: 'brand-viewer-password-1' };
/** A real 1×1 PNG. */
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

async function expectAccessible(page: Page, screen: string) {
  const violations = await seriousViolations(page);
  expect(violations, `${screen}: ${JSON.stringify(violations, null, 2)}`).toEqual([]);
}

async function signIn(
  page: Page,
  url: string,
  who: { email: string; password: string },
  labels = { email: 'Email', password: 'Password', button: 'Sign in' },
) {
  await page.goto(`${url}/admin/`);
  await page.getByLabel(labels.email).fill(who.email);
  await page.getByRole('textbox', { name: labels.password }).fill(who.password);
  await page.getByRole('button', { name: labels.button }).click();
}

describe.skipIf(!CHROMIUM)('the customer pages’ brand in the panel', () => {
  let cp: ControlPlane;
  let browser: Browser;
  beforeAll(async () => {
    [cp, browser] = await Promise.all([startControlPlane({ owner: OWNER }), launchBrowser()]);
    const viewer = await cp.api.post('/api/v1/admins', { ...VIEWER, role: 'viewer' });
    if (viewer.status !== 201) throw new Error(viewer.text);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await cp?.stop();
  });

  it('lets the owner brand the pages with a live preview, saves only what changed, and the portal answers it', async () => {
    const { page, errors } = await openPage(browser);
    onTestFailed(() => shot(page, 'customer-pages-failed'));
    // What the panel sends (the API client's Request carries its body as a stream the DevTools protocol does not show).
    await page.addInitScript(`{
      const send = window.fetch;
      window.__patches = [];
      window.fetch = async (input, init) => {
        if (input instanceof Request && input.method === 'PATCH') window.__patches.push(JSON.parse(await input.clone().text()));
        return send(input, init);
      };
    }`);
    const patches = () => page.evaluate('window.__patches') as Promise<Array<Record<string, unknown>>>;
    await signIn(page, cp.http, OWNER);
    await page.getByRole('heading', { level: 2, name: 'Dashboard' }).waitFor();
    await page.getByRole('navigation').getByRole('link', { name: 'Customer pages' }).click();
    await page.getByRole('heading', { level: 2, name: 'Customer pages' }).waitFor();
    const preview = page.getByTestId('preview');
    // Nothing set: the host name, the default iOS order.
    await expect.poll(() => preview.getByTestId('preview-name').textContent()).toBe('127.0.0.1');

    await page.getByLabel('Name').fill('Acme VPN');
    await expect.poll(() => preview.getByTestId('preview-name').textContent()).toBe('Acme VPN');

    // A file over 64 KiB is refused here, with the reason; nothing is sent.
    const big = Buffer.alloc(70 * 1024);
    Buffer.from(PNG_1X1, 'base64').copy(big);
    const input = page.locator('input[type="file"]');
    await input.setInputFiles({ name: 'big.png', mimeType: 'image/png', buffer: big });
    await expect
      .poll(() => page.getByTestId('logo-error').textContent())
      .toBe('This file is 70 KiB: a logo can be at most 64 KiB. Make it smaller and try again.');
    expect(await preview.getByTestId('preview-logo').count()).toBe(0);
    await input.setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: Buffer.from(PNG_1X1, 'base64') });
    await expect.poll(() => preview.getByTestId('preview-logo').getAttribute('src')).toBe(`data:image/png;base64,${PNG_1X1}`);
    expect(await page.getByTestId('logo-error').count()).toBe(0);

    await page.getByRole('textbox', { name: 'Primary colour' }).fill('#1d4ed8');
    await expect
      .poll(() =>
        preview.getByTestId('preview-header').evaluate((e) => (globalThis as unknown as Styled).getComputedStyle(e).backgroundColor),
      )
      .toBe('rgb(29, 78, 216)');
    await page.getByLabel('Announcement', { exact: true }).fill('Maintenance on Sunday night.');
    await expect.poll(() => preview.getByTestId('preview-announcement').textContent()).toBe('Maintenance on Sunday night.');

    // iOS: Streisand moved up, to first (keyboard: focus the button, Enter).
    await page.getByLabel('Platform').selectOption('ios');
    await expect
      .poll(() => preview.getByTestId('preview-app').allTextContents())
      .toEqual(['Happ', 'Streisand', 'Hiddify', 'Shadowrocket', 'v2RayTun', 'Stash', 'sing-box', 'Karing']);
    await page.getByRole('button', { name: 'Move Streisand up' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(async () => (await preview.getByTestId('preview-app').allTextContents()).slice(0, 2)).toEqual(['Streisand', 'Happ']);
    // Karing not offered on iOS.
    await page.getByRole('checkbox', { name: '8. Karing' }).click();
    await expect.poll(async () => (await preview.getByTestId('preview-app').allTextContents()).includes('Karing')).toBe(false);

    // A Persian welcome line: the preview follows the tab, right to left.
    await page.getByRole('tab', { name: 'فارسی' }).click();
    await page.getByLabel('Welcome line').fill('خوش آمدید');
    await expect.poll(() => preview.getByTestId('preview-welcome').getAttribute('dir')).toBe('rtl');
    await expectAccessible(page, 'customer pages (owner, unsaved)');
    await page.evaluate('window.scrollTo(0, 0)');
    await shot(page, 'customer-pages-1280-preview');

    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(async () => (await patches()).length).toBe(1);
    const body = (await patches())[0] as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['announcement', 'apps', 'logo', 'name', 'primary_color', 'texts']);
    expect(body.apps).toEqual({ ios: ['streisand', 'happ', 'hiddify', 'shadowrocket', 'v2raytun', 'stash', 'sing-box'] });
    await page.getByText('Saved.').waitFor();

    const branding = (await (await fetch(`${cp.http}/portal/v1/branding`)).json()) as Record<string, any>;
    expect(branding).toMatchObject({
      name: 'Acme VPN',
      logo: `data:image/png;base64,${PNG_1X1}`,
      primary_color: '#1d4ed8',
      announcement: 'Maintenance on Sunday night.',
      support_url: null,
      texts: { fa: { welcome: 'خوش آمدید' } },
    });
    expect(branding.apps.ios).toEqual(['streisand', 'happ', 'hiddify', 'shadowrocket', 'v2raytun', 'stash', 'sing-box']);
    expect(branding.apps.android[0]).toBe('happ');

    // A second save sends only the one change; a server refusal is shown under its field.
    await page.getByLabel('Support link').fill('ftp://example.com/help');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(async () => (await patches()).length).toBe(2);
    expect(Object.keys((await patches())[1] as object)).toEqual(['support_url']);
    await page.getByText('an http or https URL (at most 500 characters), or null').waitFor();

    // Reset iOS to the default order: the preview follows.
    await page.getByLabel('Support link').fill('');
    await page.getByRole('button', { name: 'Reset to default' }).click();
    await expect.poll(async () => (await preview.getByTestId('preview-app').allTextContents())[0]).toBe('Happ');
    expect(errors).toEqual([]);
  });

  it('reads at 390 px with the preview below the form, and passes axe', async () => {
    const { page, errors } = await openPage(browser, { width: 390 });
    onTestFailed(() => shot(page, 'customer-pages-390-failed'));
    await signIn(page, cp.http, OWNER);
    await page.getByRole('heading', { level: 2, name: 'Dashboard' }).waitFor();
    await page.goto(`${cp.http}/admin/customer-pages`);
    await page.getByRole('heading', { level: 2, name: 'Customer pages' }).waitFor();
    await expect.poll(() => page.getByTestId('preview-name').textContent()).toBe('Acme VPN');
    const form = await page.getByRole('button', { name: 'Save', exact: true }).boundingBox();
    const preview = await page.getByTestId('preview').boundingBox();
    expect(preview?.y ?? 0).toBeGreaterThan(form?.y ?? Number.POSITIVE_INFINITY);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await expectAccessible(page, 'customer pages at 390 px');
    await shot(page, 'customer-pages-390');
    expect(errors).toEqual([]);
  });

  it('renders in Persian right to left, and passes axe', async () => {
    const { page, errors } = await openPage(browser, { locale: 'fa-IR' });
    onTestFailed(() => shot(page, 'customer-pages-fa-failed'));
    await signIn(page, cp.http, OWNER, { email: 'ایمیل', password: 'گذرواژه', button: 'ورود' });
    await page.getByRole('heading', { level: 2, name: 'پیشخوان' }).waitFor();
    await page.getByRole('navigation').getByRole('link', { name: 'صفحه‌های مشتریان' }).click();
    await page.getByRole('heading', { level: 2, name: 'صفحه‌های مشتریان' }).waitFor();
    await expect.poll(() => page.getByTestId('preview-name').textContent()).toBe('Acme VPN');
    await page.getByLabel('سکو').selectOption('ios');
    await page.getByRole('button', { name: 'بردن Happ به بالا' }).waitFor();
    await expectAccessible(page, 'customer pages in Persian');
    await shot(page, 'customer-pages-fa');
    expect(errors).toEqual([]);
  });

  it('shows a viewer the screen read-only', async () => {
    const { page, errors } = await openPage(browser);
    onTestFailed(() => shot(page, 'customer-pages-viewer-failed'));
    await signIn(page, cp.http, VIEWER);
    await page.getByRole('heading', { level: 2, name: 'Dashboard' }).waitFor();
    await page.goto(`${cp.http}/admin/customer-pages`);
    await page.getByRole('heading', { level: 2, name: 'Customer pages' }).waitFor();
    await page.getByTestId('read-only-note').waitFor();
    await expect.poll(() => page.getByTestId('preview-name').textContent()).toBe('Acme VPN');
    expect(await page.getByLabel('Name').isDisabled()).toBe(true);
    for (const name of ['Save', 'Upload a logo', 'Replace the logo', 'Remove the logo', 'Reset to default']) {
      expect(await page.getByRole('button', { name, exact: true }).count(), name).toBe(0);
    }
    expect(await page.getByRole('button', { name: /^Move / }).count()).toBe(0);
    expect(await page.locator('input[type="file"]').count()).toBe(0);
    await expectAccessible(page, 'customer pages (viewer)');
    expect(errors).toEqual([]);
  });
});

/** The browser's getComputedStyle as these Node-typed tests name it inside evaluate (the tests' lib has no DOM). */
type Styled = { getComputedStyle(x: unknown): { backgroundColor: string } };

import { type ControlPlane, startControlPlane } from '@svc/testkit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { CHROMIUM, launchBrowser, openPage, seriousViolations, shot } from './browser.ts';

/**
 * Lists that stay fast and a palette to jump (issue 30 items 6 and 7), in a real browser against
 * `svc start`: typing in a list's search box asks the server (`q`), the search and the sort
 * live in the URL (a reload keeps them), the total is shown; Ctrl+K finds a node, a client and
 * a subscription by name or email and opens it; dashboard tiles open their filtered lists.
 */

const OWNER = { email: 'lists-owner@example.com', password: 'lists-owner-password-1' };

async function expectAccessible(page: Page, screen: string) {
  const violations = await seriousViolations(page);
  expect(violations, `${screen}: ${JSON.stringify(violations, null, 2)}`).toEqual([]);
}

const rowTexts = (page: Page) => page.getByRole('table').getByRole('row').allTextContents();

describe.skipIf(!CHROMIUM)('lists and the palette in the panel', () => {
  let cp: ControlPlane;
  let browser: Browser;
  const subs: Record<string, string> = {};
  beforeAll(async () => {
    [cp, browser] = await Promise.all([startControlPlane({ owner: OWNER }), launchBrowser()]);
    const api = cp.api;
    await api.post('/api/v1/nodes', { name: 'frankfurt-edge', address: '127.0.0.2' });
    const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString();
    for (const [name, expires] of [
      ['olga', day(40)],
      ['omar', day(3)],
      ['pavel', null],
      ['quinn', day(12)],
    ] as const) {
      const client = (await api.post('/api/v1/clients', { email: `${name}@shop.example`, note: `${name} note` })).body;
      const sub = await api.post('/api/v1/subscriptions', {
        client_id: client.id,
        access_group_ids: [],
        note: `${name}-phone`,
        expires_at: expires,
      });
      if (sub.status !== 201) throw new Error(sub.text);
      subs[name] = sub.body.id;
    }
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await cp?.stop();
  });

  async function signedIn(width = 1280) {
    const opened = await openPage(browser, { width });
    const { page } = opened;
    await page.goto(`${cp.http}/admin/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByRole('textbox', { name: 'Password' }).fill(OWNER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 2, name: 'Dashboard' }).waitFor();
    return opened;
  }

  it('the subscription list searches on the server, sorts by a header, and keeps both in the URL', async () => {
    const { page, errors } = await signedIn();
    onTestFailed(() => shot(page, 'lists-failed'));
    await page.goto(`${cp.http}/admin/subscriptions`);
    await page.getByRole('heading', { level: 2, name: 'Subscriptions' }).waitFor();
    await expect.poll(() => page.getByTestId('list-total').textContent()).toBe('4 found');

    // Typing asks the server: "om" (under 3 characters) matches the start of an email only.
    const searched = page.waitForResponse((r) => r.url().includes('/api/v1/subscriptions?') && r.url().includes('q=om'));
    await page.getByTestId('list-search').fill('om');
    expect((await searched).status()).toBe(200);
    await expect.poll(() => new URL(page.url()).searchParams.get('q')).toBe('om');
    await expect.poll(() => page.getByTestId('list-total').textContent()).toBe('1 found');
    expect((await rowTexts(page)).join(' ')).toContain('omar-phone');

    // From 3 characters, anywhere in the client's email: every @shop.example client.
    await page.getByTestId('list-search').fill('shop.exa');
    await expect.poll(() => page.getByTestId('list-total').textContent()).toBe('4 found');

    // Sort by expiry from the header: soonest first, never-expiring last, and the URL says so.
    await page.getByRole('button', { name: /^Expires/ }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('sort')).toBe('expires');
    await expect
      .poll(async () => (await rowTexts(page)).slice(1).map((r) => /(\w+)-phone/.exec(r)?.[1]))
      .toEqual(['omar', 'quinn', 'olga', 'pavel']);
    await page.getByRole('button', { name: /^Expires/ }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('sort')).toBe('-expires');
    await expectAccessible(page, 'subscriptions searched and sorted');
    await shot(page, 'lists-01-subscriptions-sorted');

    // A reload keeps the search and the sort.
    await page.reload();
    await page.getByRole('heading', { level: 2, name: 'Subscriptions' }).waitFor();
    expect(await page.getByTestId('list-search').inputValue()).toBe('shop.exa');
    await expect
      .poll(async () => (await rowTexts(page)).slice(1).map((r) => /(\w+)-phone/.exec(r)?.[1]))
      .toEqual(['pavel', 'olga', 'quinn', 'omar']);
    expect(errors).toEqual([]);
  });

  it('Ctrl+K finds a node, a client and a subscription by name or email and opens them', async () => {
    const { page, errors } = await signedIn();
    onTestFailed(() => shot(page, 'palette-failed'));
    // Not in the first load: the palette's chunk comes with the first Ctrl+K.
    const chunk = page.waitForResponse((r) => /\/assets\/palette-[^/]+\.js$/.test(r.url()));
    await page.keyboard.press('Control+K');
    expect((await chunk).status()).toBe(200);
    const search = page.getByRole('textbox', { name: /Node, client or subscription/ });
    await search.waitFor();
    await search.fill('frankfurt');
    await page.getByRole('button', { name: /frankfurt-edge/ }).waitFor();
    await expectAccessible(page, 'palette');
    await shot(page, 'lists-02-palette');
    await page.getByRole('button', { name: /frankfurt-edge/ }).click();
    await page.getByRole('heading', { level: 2, name: 'frankfurt-edge' }).waitFor();

    // A subscription by its client's email; then the client.
    await page.getByTestId('open-palette').click();
    await search.fill('quinn@shop');
    await page.getByRole('button', { name: /quinn-phone/ }).click();
    await expect.poll(() => new URL(page.url()).pathname).toBe(`/admin/subscriptions/${subs.quinn}`);

    await page.keyboard.press('Control+K');
    await search.fill('olga@');
    await page.getByRole('button', { name: /^olga@shop\.example/ }).click();
    await expect.poll(() => new URL(page.url()).pathname).toBe('/admin/subscriptions');
    await expect.poll(async () => (await rowTexts(page)).join(' ')).toContain('olga-phone');
    expect((await rowTexts(page)).join(' ')).not.toContain('omar-phone');

    // A section by its name.
    await page.keyboard.press('Control+K');
    await search.fill('audit');
    await page.getByRole('button', { name: 'Audit log' }).click();
    await page.getByRole('heading', { level: 2, name: 'Audit log' }).waitFor();
    expect(errors).toEqual([]);
  });

  it('dashboard tiles open their filtered lists; the palette works at 390 px', async () => {
    const { page, errors } = await signedIn(390);
    onTestFailed(() => shot(page, 'tiles-failed'));
    await page.getByRole('region', { name: 'Traffic' }).getByRole('link', { name: 'Traffic' }).click();
    await page.getByRole('heading', { level: 2, name: 'Subscriptions' }).waitFor();
    expect(new URL(page.url()).searchParams.get('sort')).toBe('-used');
    await page.goBack();
    await page.getByRole('region', { name: 'Revenue' }).getByRole('link', { name: 'Revenue' }).click();
    await page.getByRole('heading', { level: 2, name: 'Payments' }).waitFor();
    expect(new URL(page.url()).searchParams.get('status')).toBe('succeeded');
    expect(new URL(page.url()).searchParams.get('from')).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    await page.goBack();
    await page
      .getByRole('region', { name: 'Certificates' })
      .getByRole('link', { name: /failing/ })
      .click();
    await page.getByRole('heading', { level: 2, name: 'Certificates' }).waitFor();
    expect(new URL(page.url()).searchParams.get('state')).toBe('failing');
    await page.getByRole('radio', { name: 'Failing' }).isChecked();
    await expectAccessible(page, 'certificates filtered');

    await page.getByTestId('open-palette').click();
    const search = page.getByRole('textbox', { name: /Node, client or subscription/ });
    await search.fill('pavel');
    await page.getByRole('button', { name: /pavel-phone/ }).click();
    await expect.poll(() => new URL(page.url()).pathname).toBe(`/admin/subscriptions/${subs.pavel}`);
    await page.getByRole('heading', { level: 3, name: 'Subscription link' }).waitFor();
    await shot(page, 'lists-03-phone-after-palette');
    expect(errors).toEqual([]);
  });
});

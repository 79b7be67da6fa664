import { type ApiResponse, type ControlPlane, startControlPlane } from '@svc/testkit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { CHROMIUM, launchBrowser, openPage, seriousViolations, shot } from './browser.ts';

/**
 * Bulk actions from the panel's tables (issue 35.3), in a real browser against `svc start` (its
 * worker runs the jobs): the subscriptions list selects every row its filter matches across
 * pages, extends their expiry after a dry run that says how many, follows the job's progress to
 * its end and clears the selection; the API then shows every one extended and nothing else
 * touched. Rows picked one by one on the clients list are disabled, in Persian in the dark on a 390 px phone
 * with the event stream cut off (the progress then comes from polling the job). A danger action
 * asks for a tick first. Viewers get no selection at all. axe on every state.
 */

const OWNER = { email: 'bulk-owner@example.com', password: 'bulk-owner-password-1' };
const VIEWER = { email: 'bulk-viewer@example.com', password: 'bulk-viewer-password-1' };
const DAY = 86_400_000;
/** More than the list's page (100), so only a selection by filter takes them all. */
const FLEET = 132;

async function expectAccessible(page: Page, screen: string) {
  const violations = await seriousViolations(page);
  expect(violations, `${screen}: ${JSON.stringify(violations, null, 2)}`).toEqual([]);
}

interface Sub {
  id: string;
  client_id: string;
  expires_at: string | null;
  note: string | null;
}

describe.skipIf(!CHROMIUM)('bulk actions in the panel', () => {
  let cp: ControlPlane;
  let browser: Browser;
  /** expires_at of every subscription as made. */
  const before = new Map<string, string>();
  const fleet: string[] = [];
  const others: string[] = [];
  const idle: Record<string, string> = {};
  beforeAll(async () => {
    [cp, browser] = await Promise.all([startControlPlane({ owner: OWNER }), launchBrowser()]);
    const api = cp.api;
    const client = async (email: string) => {
      const res = await api.post('/api/v1/clients', { email });
      if (res.status !== 201) throw new Error(res.text);
      return res.body.id as string;
    };
    const sub = async (clientId: string, note: string, days: number) => {
      const res = await api.post('/api/v1/subscriptions', {
        client_id: clientId,
        access_group_ids: [],
        note,
        expires_at: new Date(Date.now() + days * DAY).toISOString(),
      });
      if (res.status !== 201) throw new Error(res.text);
      before.set(res.body.id, res.body.expires_at);
      return res.body.id as string;
    };
    // Three clients of one shop, 132 subscriptions between them (the filter q=fleet.example).
    const shops = await Promise.all(['north', 'south', 'east'].map((n) => client(`${n}@fleet.example`)));
    for (let i = 0; i < FLEET; i += 12) {
      const batch = Array.from({ length: Math.min(12, FLEET - i) }, (_, k) => i + k);
      fleet.push(
        ...(await Promise.all(batch.map((n) => sub(shops[n % 3] as string, `fleet-${String(n).padStart(3, '0')}`, 10 + (n % 5))))),
      );
    }
    // Others the filter does not match: untouched by the job.
    const other = await client('walk-in@elsewhere.example');
    for (const n of [1, 2, 3]) others.push(await sub(other, `walk-in-${n}`, 5));
    // Clients to disable by picking their rows.
    for (const name of ['idle-a', 'idle-b', 'busy-c']) idle[name] = await client(`${name}@quiet.example`);
    const viewer = await api.post('/api/v1/admins', { ...VIEWER, role: 'viewer' });
    if (viewer.status !== 201) throw new Error(viewer.text);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await cp?.stop();
  });

  async function signedIn(who: { email: string; password: string }, opts: Parameters<typeof openPage>[1] = {}) {
    const opened = await openPage(browser, opts);
    const { page } = opened;
    await page.goto(`${cp.http}/admin/`);
    await page.getByRole('textbox', { name: /^(Email|ایمیل)/ }).fill(who.email);
    await page.getByRole('textbox', { name: /^(Password|گذرواژه)/ }).fill(who.password);
    await page.getByRole('button', { name: /^(Sign in|ورود)$/ }).click();
    await page.getByRole('heading', { level: 2 }).first().waitFor();
    return opened;
  }

  /** Every subscription, as the API has it now. */
  async function allSubscriptions(): Promise<Map<string, Sub>> {
    const out = new Map<string, Sub>();
    let cursor: string | null = null;
    do {
      const res: ApiResponse<{ items: Sub[]; next_cursor: string | null }> = await cp.api.get(
        `/api/v1/subscriptions?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(res.status, res.text).toBe(200);
      for (const s of res.body.items) out.set(s.id, s);
      cursor = res.body.next_cursor;
    } while (cursor);
    return out;
  }

  it('selects every subscription a filter matches across pages, extends their expiry after a dry run, and follows the job to its end', async () => {
    const { page, errors } = await signedIn(OWNER);
    onTestFailed(() => shot(page, 'bulk-failed'));
    await page.goto(`${cp.http}/admin/subscriptions`);
    await page.getByRole('heading', { level: 2, name: 'Subscriptions' }).waitFor();
    await page.getByTestId('list-search').fill('fleet.example');
    await expect.poll(() => page.getByTestId('list-total').textContent()).toBe(`${FLEET} found`);
    const table = page.getByRole('table', { name: 'Subscriptions' });
    const firstRow = table.getByRole('checkbox', { name: /^Select fleet-\d{3}$/ }).first();
    await firstRow.waitFor();
    await expectAccessible(page, 'subscriptions with checkboxes');

    // The header checkbox takes the page loaded (100 of 132); the banner offers the rest.
    await table.getByRole('checkbox', { name: 'Select every row shown' }).check();
    await page.getByTestId('bulk-bar').getByText('100 selected').waitFor();
    const banner = page.getByTestId('selection-banner');
    await banner.getByText('All 100 rows shown are selected.').waitFor();
    expect(await firstRow.isChecked()).toBe(true);
    await expectAccessible(page, 'a page selected');
    await shot(page, 'bulk-00-page-selected');
    await banner.getByRole('button', { name: `Select all ${FLEET} matching this filter` }).click();
    await page.getByTestId('bulk-bar').getByText(`All ${FLEET} matching this filter selected`).waitFor();
    await banner.waitFor({ state: 'detached' });
    await expectAccessible(page, 'every match selected');
    await shot(page, 'bulk-01-selected-by-filter');

    // Extend expiry: the days, then the dry run (by the filter, not ids) says how many.
    await page.getByTestId('bulk-bar').getByRole('button', { name: 'Extend expiry' }).click();
    const dialog = page.getByRole('dialog', { name: 'Extend expiry' });
    await dialog.getByRole('textbox', { name: 'Days' }).fill('30');
    await expectAccessible(page, 'extend expiry: days');
    await shot(page, 'bulk-02-extend-days');
    // (Chromium does not show the test a fetch's body: what was sent is judged by its answers.)
    const dryRun = page.waitForResponse((r) => r.url().endsWith('/api/v1/subscriptions/bulk') && r.request().method() === 'POST');
    await dialog.getByRole('button', { name: 'Continue' }).click();
    // Only 100 rows are loaded: a count of 132 is the filter's.
    expect(await (await dryRun).json()).toMatchObject({ dry_run: true, count: FLEET });
    await dialog.getByText(`This will change ${FLEET} subscriptions`).waitFor();
    await dialog.getByText('Extend the expiry by 30 days.').waitFor();
    expect(await dialog.getByTestId('bulk-sample').getByRole('listitem').count()).toBe(5);
    await dialog.getByText(`and ${FLEET - 5} more`).waitFor();
    await expectAccessible(page, 'extend expiry: dry run');
    await shot(page, 'bulk-03-extend-dry-run');

    // The job: 202, its progress to the end, the result.
    const job = page.waitForResponse((r) => r.url().endsWith('/api/v1/subscriptions/bulk') && r.request().method() === 'POST');
    await dialog.getByRole('button', { name: `Apply to ${FLEET}` }).click();
    const answer = await job;
    expect(answer.status()).toBe(202);
    const queued = await answer.json();
    expect(queued).toMatchObject({ target: 'subscriptions', total: FLEET, action: { type: 'extend_expiry', days: 30 } });
    const jobId = queued.id as string;
    await dialog.getByTestId('bulk-result').getByText(`${FLEET} changed, 0 skipped.`).waitFor();
    expect(await dialog.getByRole('progressbar', { name: 'Progress' }).getAttribute('aria-valuenow')).toBe('100');
    await dialog.getByText(`${FLEET} of ${FLEET} done`).waitFor();
    await expectAccessible(page, 'extend expiry: done');
    await shot(page, 'bulk-04-extend-done');
    expect((await cp.api.get(`/api/v1/bulk-jobs/${jobId}`)).body).toMatchObject({ status: 'done', total: FLEET, done: FLEET, skipped: 0 });

    // Afterwards the selection is gone and the list is read again.
    await dialog.getByRole('button', { name: 'Close' }).first().click();
    await page.getByTestId('bulk-bar').waitFor({ state: 'detached' });
    expect(await table.getByRole('checkbox', { name: 'Select every row shown' }).isChecked()).toBe(false);

    // Every one the filter matched moved on by exactly 30 days; the others did not move.
    const now = await allSubscriptions();
    for (const id of fleet) {
      const was = new Date(before.get(id) as string).getTime();
      expect(new Date(now.get(id)?.expires_at as string).getTime() - was, id).toBe(30 * DAY);
    }
    for (const id of others) expect(now.get(id)?.expires_at, id).toBe(before.get(id));
    expect(errors).toEqual([]);
  });

  it('deletes rows picked one by one only after the danger is acknowledged', async () => {
    const { page, errors } = await signedIn(OWNER);
    onTestFailed(() => shot(page, 'bulk-delete-failed'));
    await page.goto(`${cp.http}/admin/subscriptions?q=walk-in`);
    await page.getByRole('heading', { level: 2, name: 'Subscriptions' }).waitFor();
    await expect.poll(() => page.getByTestId('list-total').textContent()).toBe('3 found');
    const table = page.getByRole('table', { name: 'Subscriptions' });
    // Space on a focused checkbox picks its row, as a click does (and does not open the row);
    // Shift+click picks the rows between; a click takes one back.
    await table.getByRole('checkbox', { name: 'Select walk-in-1' }).focus();
    await page.keyboard.press('Space');
    await page.getByTestId('bulk-bar').getByText('1 selected').waitFor();
    await table.getByRole('checkbox', { name: 'Select walk-in-3' }).click({ modifiers: ['Shift'] });
    await page.getByTestId('bulk-bar').getByText('3 selected').waitFor();
    await table.getByRole('checkbox', { name: 'Select walk-in-2' }).click();
    await page.getByTestId('bulk-bar').getByText('2 selected').waitFor();
    expect(await table.getByRole('checkbox', { name: 'Select walk-in-2' }).isChecked()).toBe(false);
    expect(new URL(page.url()).pathname).toBe('/admin/subscriptions');
    // All of a short list is on screen: no offer to select more.
    expect(await page.getByTestId('selection-banner').count()).toBe(0);

    // Add traffic takes an amount and its unit; the dry run says what it will do (cancelled here).
    await page.getByTestId('bulk-bar').getByRole('button', { name: 'Add traffic' }).click();
    const add = page.getByRole('dialog', { name: 'Add traffic' });
    await add.getByRole('textbox', { name: 'Amount' }).fill('500');
    await add.getByLabel('Unit', { exact: true }).click();
    await page.getByRole('option', { name: 'MiB', exact: true }).click();
    await expectAccessible(page, 'add traffic: amount');
    await shot(page, 'bulk-05-add-traffic');
    await add.getByRole('button', { name: 'Continue' }).click();
    await add.getByText('Add 500 MB to each traffic limit (unlimited ones stay unlimited).').waitFor();
    await add.getByRole('button', { name: 'Cancel' }).click();
    await add.waitFor({ state: 'hidden' });

    await page.getByTestId('bulk-bar').getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete' });
    await dialog.getByText('This will change 2 subscriptions').waitFor();
    const confirm = dialog.getByRole('button', { name: 'Apply to 2' });
    expect(await confirm.isDisabled()).toBe(true);
    await expectAccessible(page, 'delete: dry run');
    await dialog.getByRole('checkbox', { name: 'I understand that this cannot be undone' }).check();
    await shot(page, 'bulk-06-delete-acknowledged');
    const job = page.waitForResponse((r) => r.url().endsWith('/api/v1/subscriptions/bulk') && r.request().method() === 'POST');
    await confirm.click();
    expect(await (await job).json()).toMatchObject({ total: 2, action: { type: 'delete' } });
    await dialog.getByTestId('bulk-result').getByText('2 changed, 0 skipped.').waitFor();
    await dialog.getByRole('button', { name: 'Close' }).first().click();
    await expect.poll(() => page.getByTestId('list-total').textContent()).toBe('1 found');
    const now = await allSubscriptions();
    expect([others[0], others[2]].map((id) => now.has(id as string))).toEqual([false, false]);
    expect(now.has(others[1] as string)).toBe(true);
    expect(errors).toEqual([]);
  });

  it('disables clients picked row by row, in Persian in the dark on a 390 px phone, with the job followed by polling when the event stream is down', async () => {
    const { page, errors } = await signedIn(OWNER, { locale: 'fa-IR', width: 390, colorScheme: 'dark' });
    onTestFailed(() => shot(page, 'bulk-fa-failed'));
    // No event stream: the job's progress can only come from GET /bulk-jobs/{id}.
    await page.route(/\/api\/v1\/events$/, (route) => route.abort());
    await page.goto(`${cp.http}/admin/clients?q=quiet.example`);
    await page.getByRole('heading', { level: 2, name: 'مشتریان' }).waitFor();
    const table = page.getByRole('table', { name: 'مشتریان' });
    await table.getByRole('checkbox', { name: 'انتخاب idle-a@quiet.example' }).click();
    await table.getByRole('checkbox', { name: 'انتخاب idle-b@quiet.example' }).click();
    await page.getByTestId('bulk-bar').getByText('۲ مورد انتخاب شده').waitFor();
    await expectAccessible(page, 'fa clients selected');
    await shot(page, 'bulk-07-fa-clients-selected');

    // On a phone the actions are a menu.
    await page.getByTestId('bulk-bar').getByRole('button', { name: 'عملیات' }).click();
    await expectAccessible(page, 'fa actions menu');
    await shot(page, 'bulk-08-fa-actions-menu');
    await page.getByRole('menuitem', { name: 'غیرفعال‌سازی' }).click();
    const dialog = page.getByRole('dialog', { name: 'غیرفعال‌سازی' });
    await dialog.getByText('این کار ۲ مشتری را تغییر می‌دهد').waitFor();
    await expectAccessible(page, 'fa disable: dry run');
    await shot(page, 'bulk-09-fa-disable-dry-run');
    const polled = page.waitForResponse((r) => /\/api\/v1\/bulk-jobs\/[^/]+$/.test(r.url()) && r.status() === 200);
    const job = page.waitForResponse((r) => r.url().endsWith('/api/v1/clients/bulk') && r.request().method() === 'POST');
    await dialog.getByRole('button', { name: 'اعمال روی ۲ مورد' }).click();
    expect(await (await job).json()).toMatchObject({ target: 'clients', total: 2, action: { type: 'disable' } });
    await polled;
    await dialog.getByTestId('bulk-result').getByText('۲ مورد تغییر کرد، ۰ مورد کنار گذاشته شد.').waitFor();
    await expectAccessible(page, 'fa disable: done');
    await shot(page, 'bulk-10-fa-disable-done');
    await dialog.getByRole('button', { name: 'بستن' }).first().click();
    await page.getByTestId('bulk-bar').waitFor({ state: 'detached' });

    const status = async (id: string) => (await cp.api.get(`/api/v1/clients/${id}`)).body.status;
    expect([
      await status(idle['idle-a'] as string),
      await status(idle['idle-b'] as string),
      await status(idle['busy-c'] as string),
    ]).toEqual(['disabled', 'disabled', 'active']);
    expect(errors).toEqual([]);
  });

  it('shows a viewer no selection and no bulk actions', async () => {
    const { page, errors } = await signedIn(VIEWER);
    onTestFailed(() => shot(page, 'bulk-viewer-failed'));
    for (const [path, heading, row] of [
      ['/admin/subscriptions?q=walk-in', 'Subscriptions', 'walk-in-2'],
      ['/admin/clients?q=quiet.example', 'Clients', 'busy-c@quiet.example'],
    ] as const) {
      await page.goto(`${cp.http}${path}`);
      await page.getByRole('heading', { level: 2, name: heading }).waitFor();
      await page.getByTestId('read-only-note').waitFor();
      await page.getByText(row, { exact: true }).first().waitFor();
      expect(await page.getByRole('table').getByRole('checkbox').count(), path).toBe(0);
      expect(await page.getByTestId('bulk-bar').count(), path).toBe(0);
    }
    expect(errors).toEqual([]);
  });
});

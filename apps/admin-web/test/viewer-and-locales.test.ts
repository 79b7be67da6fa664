import { type ControlPlane, startControlPlane } from '@svc/testkit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { CHROMIUM, launchBrowser, openPage, seriousViolations, shot } from './browser.ts';

/**
 * The panel for everyone (issue 30.3, 30.4, 30.7) in a real browser against `svc start`:
 * sign-in through the screen with the session surviving a reload only through the HttpOnly
 * cookie; a viewer sees every screen without a write action and is told why; Persian renders
 * right to left; the language choice sticks. axe on every screen.
 */

const OWNER = { email: 'locales-owner@example.com', password: 'locales-owner-password-1' };
const VIEWER = { email: 'viewer@example.com', password: 'viewer-password-1' };

async function expectAccessible(page: Page, screen: string) {
  const violations = await seriousViolations(page);
  expect(violations, `${screen}: ${JSON.stringify(violations, null, 2)}`).toEqual([]);
}

async function signIn(page: Page, url: string, who: { email: string; password: string }) {
  await page.goto(`${url}/admin/`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await page.getByLabel('Email').fill(who.email);
  await page.getByRole('textbox', { name: 'Password' }).fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

describe.skipIf(!CHROMIUM)('the panel for a viewer, and in other languages', () => {
  let cp: ControlPlane;
  let browser: Browser;
  let subscriptionId: string;
  let nodeId: string;
  beforeAll(async () => {
    [cp, browser] = await Promise.all([startControlPlane({ owner: OWNER }), launchBrowser()]);
    // Something on every screen, made through the API.
    const api = cp.api;
    const node = (await api.post('/api/v1/nodes', { name: 'edge-view', address: '127.0.0.1' })).body;
    nodeId = node.id;
    const profile = (
      await api.post('/api/v1/inbound-profiles', {
        name: 'vmess-ws',
        protocol: 'vmess',
        stream: { network: 'ws', security: 'none', ws: { path: '/ws' } },
      })
    ).body;
    const inbound = (await api.post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 20443 })).body;
    const group = (await api.post('/api/v1/access-groups', { name: 'all', inbound_ids: [inbound.id] })).body;
    const client = (await api.post('/api/v1/clients', { email: 'someone@example.com' })).body;
    subscriptionId = (await api.post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] })).body.id;
    const plan = await api.post('/api/v1/plans', {
      name: 'Monthly 100 GiB',
      price: 599,
      currency: 'USD',
      duration_days: 30,
      access_group_ids: [group.id],
    });
    if (plan.status !== 201) throw new Error(plan.text);
    const viewer = await api.post('/api/v1/admins', { ...VIEWER, role: 'viewer' });
    if (viewer.status !== 201) throw new Error(viewer.text);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await cp?.stop();
  });

  it('signs in through the screen; a reload signs in again silently, with no token a script can read', async () => {
    const { page, errors } = await openPage(browser);
    onTestFailed(() => shot(page, 'viewer-failed'));
    await signIn(page, cp.http, OWNER);
    await page.getByRole('heading', { level: 2, name: 'Dashboard' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { level: 2, name: 'Dashboard' }).waitFor();
    const readable = (await page.evaluate(
      'JSON.stringify({ cookie: document.cookie, local: Object.keys(localStorage).map((k) => localStorage.getItem(k)), session: Object.keys(sessionStorage).map((k) => sessionStorage.getItem(k)) })',
    )) as string;
    expect(readable).not.toMatch(/refresh|ey[A-Za-z0-9_-]{20,}\./);
    const cookies = await page.context().cookies();
    const refresh = cookies.find((c) => c.name === 'svc_admin_refresh');
    expect(refresh).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/api/v1/auth/refresh' });
    // Sign-out ends it: a reload shows the sign-in screen.
    await page.getByRole('button', { name: /Owner/ }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await expectAccessible(page, 'sign-in');
    expect(errors).toEqual([]);
  });

  it('shows a viewer every screen without a write action, and says why', async () => {
    const { page, errors } = await openPage(browser);
    onTestFailed(() => shot(page, 'viewer-failed'));
    await signIn(page, cp.http, VIEWER);
    await page.getByRole('heading', { level: 2, name: 'Dashboard' }).waitFor();
    // [path, heading, a text on it, whether it has write actions a viewer is told are missing]
    const screens: Array<[string, string, string, boolean?]> = [
      ['/admin/nodes', 'Nodes', 'edge-view'],
      ['/admin/profiles', 'Inbound profiles', 'vmess-ws'],
      ['/admin/inbounds', 'Inbounds', 'vmess-20443'],
      ['/admin/groups', 'Access groups', 'all'],
      ['/admin/clients', 'Clients', 'someone@example.com'],
      ['/admin/plans', 'Plans', 'Monthly 100 GiB'],
      ['/admin/payments', 'Payments', 'No payments match.'],
      ['/admin/webhooks', 'Webhooks', 'No webhooks yet.'],
      ['/admin/audit-log', 'Audit log', 'subscription.created', false],
      ['/admin/admins', 'Admins', 'Only owners see and manage admins. Ask an owner to change a role.'],
      ['/admin/api-tokens', 'API tokens', 'Viewers have no API tokens. An owner or admin makes them.'],
      ['/admin/settings', 'Settings', 'Subscription links'],
      ['/admin/certificates', 'Certificates', 'No certificates yet.'],
      ['/admin/dns-providers', 'DNS providers', 'No DNS providers yet.'],
      ['/admin/acme-accounts', 'ACME accounts', 'No ACME accounts yet.'],
      ['/admin/payment-providers', 'Payment providers', 'No payment providers yet.'],
      ['/admin/chains', 'Chains', 'No chains yet.'],
      [`/admin/subscriptions/${subscriptionId}`, 'Subscription', 'someone@example.com'],
    ];
    for (const [path, heading, row, writable = true] of screens) {
      await page.goto(`${cp.http}${path}`);
      await page.getByRole('heading', { level: 2, name: heading }).waitFor();
      await page.getByText(row, { exact: true }).first().waitFor();
      if (writable) await page.getByTestId('read-only-note').waitFor();
      expect(await page.locator('[data-testid^="create-"]').count(), path).toBe(0);
      for (const name of ['Delete', 'Rotate keys', 'Save', 'Enrollment token', 'Add a rule']) {
        expect(await page.getByRole('button', { name, exact: true }).count(), `${path}: ${name}`).toBe(0);
      }
      await expectAccessible(page, `viewer ${path}`);
    }
    // A viewer is not shown the subscription link (it is full access); the page says so.
    await page.getByText('Viewers do not see links').waitFor();
    await shot(page, 'viewer-subscription');
    expect(errors).toEqual([]);
  });

  it('renders Persian right to left, in Persian, and passes axe', async () => {
    const { page, errors } = await openPage(browser, { locale: 'fa-IR' });
    onTestFailed(() => shot(page, 'fa-failed'));
    await page.goto(`${cp.http}/admin/`);
    await page.getByRole('heading', { name: 'ورود' }).waitFor();
    expect(await page.evaluate('[document.documentElement.dir, document.documentElement.lang].join(" ")')).toBe('rtl fa');
    await page.getByLabel('ایمیل').fill(OWNER.email);
    await page.getByRole('textbox', { name: 'گذرواژه' }).fill(OWNER.password);
    await page.getByRole('button', { name: 'ورود' }).click();
    await page.getByRole('heading', { level: 2, name: 'پیشخوان' }).waitFor();
    await expectAccessible(page, 'fa dashboard');
    await shot(page, 'fa-dashboard');
    await page.goto(`${cp.http}/admin/nodes`);
    await page.getByRole('heading', { level: 2, name: 'گره‌ها' }).waitFor();
    await page.getByText('edge-view').waitFor();
    // The navigation column sits on the right in a right-to-left page.
    const nav = await page.getByRole('navigation').boundingBox();
    expect((nav?.x ?? 0) + (nav?.width ?? 0)).toBeGreaterThan(1200);
    await expectAccessible(page, 'fa nodes');
    await shot(page, 'fa-nodes');
    // The node's install command: Persian around it, the command itself left to right.
    await page.goto(`${cp.http}/admin/nodes/${nodeId}`);
    await page.getByRole('heading', { level: 2, name: 'edge-view' }).waitFor();
    await page.getByTestId('issue-enroll-token').click();
    const install = page.getByTestId('install-command');
    await install.waitFor();
    expect(await install.getAttribute('dir')).toBe('ltr');
    expect(await install.textContent()).toMatch(/^curl -fsSL http/);
    await page.getByText('این را با کاربر root روی سرور اجرا کنید').waitFor();
    await expectAccessible(page, 'fa node enroll');
    await shot(page, 'fa-node-enroll');
    expect(errors).toEqual([]);
  });

  it('reads in the dark scheme on a 390 px phone, right to left, and passes axe', async () => {
    const { page, errors } = await openPage(browser, { locale: 'fa-IR', width: 390, colorScheme: 'dark' });
    onTestFailed(() => shot(page, 'fa-dark-failed'));
    await page.goto(`${cp.http}/admin/`);
    await page.getByLabel('ایمیل').fill(OWNER.email);
    await page.getByRole('textbox', { name: 'گذرواژه' }).fill(OWNER.password);
    await page.getByRole('button', { name: 'ورود' }).click();
    await page.getByRole('heading', { level: 2, name: 'پیشخوان' }).waitFor();
    expect(await page.evaluate('document.documentElement.getAttribute("data-mantine-color-scheme")')).toBe('dark');
    await expectAccessible(page, 'fa dark dashboard');
    await shot(page, 'fa-dark-390-dashboard');
    await page.goto(`${cp.http}/admin/subscriptions/${subscriptionId}`);
    await page.getByText('someone@example.com').waitFor();
    await expectAccessible(page, 'fa dark subscription');
    await shot(page, 'fa-dark-390-subscription');
    await page.goto(`${cp.http}/admin/api-tokens`);
    await page.getByRole('heading', { level: 2, name: 'توکن‌های API' }).waitFor();
    await expectAccessible(page, 'fa dark api tokens');
    await shot(page, 'fa-dark-390-api-tokens');
    expect(errors).toEqual([]);
  });

  it('switches language from the menu and keeps the choice after a reload', async () => {
    const { page } = await openPage(browser);
    onTestFailed(() => shot(page, 'ru-failed'));
    await signIn(page, cp.http, OWNER);
    await page.getByRole('heading', { level: 2, name: 'Dashboard' }).waitFor();
    await page.getByRole('button', { name: /Language/ }).click();
    await page.getByRole('menuitem', { name: 'Русский' }).click();
    await page.getByRole('heading', { level: 2, name: 'Обзор' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { level: 2, name: 'Обзор' }).waitFor();
    expect(await page.evaluate('document.documentElement.lang')).toBe('ru');
    await page.getByRole('navigation').getByRole('link', { name: 'Подписки' }).click();
    await page.getByRole('heading', { level: 2, name: 'Подписки' }).waitFor();
    await expectAccessible(page, 'ru subscriptions');
  });

  it('lets the owner add a plan, a webhook (its secret shown once) and an admin, and read the audit log of it', async () => {
    const { page, errors } = await openPage(browser);
    onTestFailed(() => shot(page, 'owner-screens-failed'));
    await signIn(page, cp.http, OWNER);
    await page.getByRole('heading', { level: 2, name: 'Dashboard' }).waitFor();

    await page.getByRole('navigation').getByRole('link', { name: 'Plans' }).click();
    await page.getByTestId('create-plan').click();
    const plan = page.getByRole('dialog');
    await plan.getByLabel('Name').fill('Weekly');
    await plan.getByRole('textbox', { name: 'Price' }).fill('1.99');
    await plan.getByRole('textbox', { name: 'Duration' }).fill('7');
    await plan.getByRole('textbox', { name: 'What it includes' }).fill('  Two devices\nServers in Europe  ');
    await expectAccessible(page, 'plan form');
    await plan.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('button', { name: 'Weekly' }).waitFor();
    await page.getByRole('cell', { name: '$1.99' }).waitFor();
    // What it includes, as customers will read it in the portal (trimmed, the line break kept).
    const onSale = (await cp.api.get('/api/v1/plans')).body.items.find((p: { name: string }) => p.name === 'Weekly');
    expect(onSale.description).toBe('Two devices\nServers in Europe');

    await page.getByRole('navigation').getByRole('link', { name: 'Webhooks' }).click();
    await page.getByTestId('create-webhook').click();
    await page.getByRole('dialog').getByLabel('Endpoint URL').fill('http://127.0.0.1:9/hook');
    await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click();
    const secret = page.getByTestId('webhook-secret');
    await secret.waitFor();
    expect(((await secret.textContent()) ?? '').length).toBeGreaterThan(20);
    await expectAccessible(page, 'webhooks with secret');
    await page.getByRole('button', { name: 'Deliveries' }).click();
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page.getByRole('dialog').getByText('webhook.test').first().waitFor();
    await expectAccessible(page, 'webhook deliveries');
    await page.keyboard.press('Escape');

    await page.getByRole('navigation').getByRole('link', { name: 'Admins' }).click();
    await page.getByTestId('create-admin').click();
    await page.getByRole('dialog').getByLabel('Email').fill('second-admin@example.com');
    await page.getByRole('dialog').getByRole('textbox', { name: 'Password' }).fill('second-admin-password-1');
    await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click();
    await page.getByRole('button', { name: 'second-admin@example.com' }).waitFor();
    await expectAccessible(page, 'admins');

    // An API token (issue 35.1): scoped, its secret shown once; it reads through the API, and revoked it stops.
    await page.getByRole('navigation').getByRole('link', { name: 'API tokens' }).click();
    await page.getByTestId('create-api-token').click();
    await page.getByRole('dialog').getByLabel('Name').fill('shop bot');
    await expectAccessible(page, 'api token form');
    await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click();
    const tokenSecret = page.getByTestId('api-token-secret');
    await tokenSecret.waitFor();
    const bearer = ((await tokenSecret.textContent()) ?? '').trim();
    expect(bearer).toMatch(/^svc_pat_/);
    await page.getByRole('cell', { name: 'shop bot' }).waitFor();
    await expectAccessible(page, 'api tokens with secret');
    await shot(page, 'api-tokens');
    expect((await fetch(`${cp.http}/api/v1/nodes`, { headers: { authorization: `Bearer ${bearer}` } })).status).toBe(200);
    await page.getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('revoked', { exact: true }).waitFor();
    expect((await fetch(`${cp.http}/api/v1/nodes`, { headers: { authorization: `Bearer ${bearer}` } })).status).toBe(401);

    // A DNS provider (credentials write-only: the list names which are set), its check dialog, and the certificate form offering it.
    await page.getByRole('navigation').getByRole('link', { name: 'DNS providers' }).click();
    await page.getByTestId('create-dns-provider').click();
    await page.getByRole('dialog').getByLabel('Name').fill('cf');
    await page.getByRole('dialog').getByLabel('api_token').fill('not-a-real-token');
    await expectAccessible(page, 'dns provider form');
    await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click();
    await page.getByRole('cell', { name: 'api_token', exact: true }).waitFor();
    expect(await page.getByText('not-a-real-token').count()).toBe(0);
    await page.getByRole('button', { name: 'Check', exact: true }).click();
    await page.getByRole('dialog').getByLabel('Domain').waitFor();
    await expectAccessible(page, 'dns check');
    await page.keyboard.press('Escape');
    await page.getByRole('navigation').getByRole('link', { name: 'Certificates' }).click();
    await page.getByTestId('create-certificate').click();
    await page.getByRole('dialog').getByText('ACME', { exact: true }).click();
    await page.getByRole('dialog').getByLabel('DNS provider').first().click();
    await page.getByRole('option', { name: 'cf (cloudflare)' }).waitFor();
    await page.keyboard.press('Escape');
    await expectAccessible(page, 'certificate form');
    await page.keyboard.press('Escape');

    // Settings: the User-Agent tester answers under the rules as they stand in the form, saved or not.
    await page.getByRole('navigation').getByRole('link', { name: 'Settings' }).click();
    const tester = page.getByTestId('ua-tester');
    await tester.getByLabel('User-Agent').fill('clash-verge/v2.2.3');
    await expect.poll(() => tester.getByTestId('ua-result').textContent()).toBe('clash-metaby rule 1');
    await tester.getByLabel('User-Agent').fill('curl/8.5.0');
    await expect.poll(() => tester.getByTestId('ua-result').textContent()).toBe('base64no rule matched: the base64 list');
    await page.getByRole('button', { name: 'Add a rule' }).click();
    const rules = page.getByTestId('format-rule');
    await rules
      .last()
      .getByRole('textbox', { name: /^Pattern/ })
      .fill('^curl/');
    await rules.last().getByLabel('Format').first().click();
    await page.getByRole('option', { name: 'xray-json' }).click();
    const n = await rules.count();
    await expect.poll(() => tester.getByTestId('ua-result').textContent()).toBe(`xray-jsonby rule ${n}`);
    await expectAccessible(page, 'settings');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect
      .poll(
        async () =>
          ((await cp.api.get('/api/v1/settings/subscription-link')).body.format_rules as Array<{ user_agent: string }>).at(-1)?.user_agent,
      )
      .toBe('^curl/');

    await page.getByRole('navigation').getByRole('link', { name: 'Audit log' }).click();
    await page.getByLabel('Record type').first().click();
    await page.getByRole('option', { name: 'plan', exact: true }).click();
    await page.getByText('plan.created').first().waitFor();
    expect(page.url()).toContain('entity_type=plan');
    await expectAccessible(page, 'audit log');
    await shot(page, 'owner-audit-log');
    expect(errors).toEqual([]);
  });
});

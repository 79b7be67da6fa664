import { type ControlPlane, startControlPlane } from '@svc/testkit';
import { AgentSimulator } from '@svc/testkit/agent-simulator';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { CHROMIUM, launchBrowser, openPage, seriousViolations, shot } from './browser.ts';

/**
 * Limits on live connections in the panel (issue 36.4), in a real browser against `svc start`
 * with an agent on its stream: a subscription's device limit and speed caps set from its page
 * reach the API; its devices card lists the device a client app registered by its HWID headers,
 * the addresses on its live connections per node and the one the fleet-wide count refuses, and
 * removing the device frees its place; a node's page says what its agent enforces and why not,
 * and a node whose agent reports nothing says it enforces none of them; plans carry the same
 * limits. axe on every screen; the devices right to left in the dark at 390 px.
 */

const OWNER = { email: 'limits-owner@example.com', password: 'limits-owner-password-1' };

async function expectAccessible(page: Page, screen: string) {
  const violations = await seriousViolations(page);
  expect(violations, `${screen}: ${JSON.stringify(violations, null, 2)}`).toEqual([]);
}

describe.skipIf(!CHROMIUM)('limits on live connections in the panel', () => {
  let cp: ControlPlane;
  let browser: Browser;
  let agent: AgentSimulator | undefined;
  let nodeId: string;
  let quietNodeId: string;
  let subscriptionId: string;
  let link: string;
  beforeAll(async () => {
    [cp, browser] = await Promise.all([startControlPlane({ owner: OWNER }), launchBrowser()]);
    const api = cp.api;
    const node = (await api.post('/api/v1/nodes', { name: 'edge-shaper', address: '127.0.0.3' })).body;
    nodeId = node.id;
    quietNodeId = (await api.post('/api/v1/nodes', { name: 'edge-old', address: '127.0.0.4' })).body.id;
    const profile = (
      await api.post('/api/v1/inbound-profiles', { name: 'vless-tcp', protocol: 'vless', stream: { network: 'tcp', security: 'none' } })
    ).body;
    const inbound = (await api.post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 20544 })).body;
    const group = (await api.post('/api/v1/access-groups', { name: 'phones', inbound_ids: [inbound.id] })).body;
    const client = (await api.post('/api/v1/clients', { email: 'walker@example.com' })).body;
    const sub = (await api.post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] })).body;
    subscriptionId = sub.id;
    link = sub.link;
    const token = (await api.post(`/api/v1/nodes/${node.id}/enroll-token`, undefined)).body;
    agent = await AgentSimulator.enroll({ endpoint: token.grpc_endpoint, caCertPem: token.ca_cert_pem, token: token.token });
    agent.connect();
    // The agent enforces device limits from its access log and cannot shape (no nft here).
    agent.sendStatus({
      enforcement: {
        deviceLimits: true,
        speedCaps: false,
        entitlements: true,
        speedCapsError: 'nft not found',
        deviceLimitsError: '',
        deviceSource: 'access-log',
        shapedDevices: [],
      },
    });
  }, 120_000);
  afterAll(async () => {
    await agent?.disconnect().catch(() => {});
    await browser?.close();
    await cp?.stop();
  });

  async function signedIn(opts: Parameters<typeof openPage>[1] = {}) {
    const opened = await openPage(browser, opts);
    const { page } = opened;
    await page.goto(`${cp.http}/admin/`);
    await page.getByRole('textbox', { name: /Email|ایمیل/ }).fill(OWNER.email);
    await page.getByRole('textbox', { name: /Password|گذرواژه/ }).fill(OWNER.password);
    await page.getByRole('button', { name: /^(Sign in|ورود)$/ }).click();
    await page.getByRole('heading', { level: 2 }).first().waitFor();
    return opened;
  }

  it('sets the device limit and speed caps on the subscription’s page; lists registered, online and refused devices; removing a device frees its place', async () => {
    const { page, errors } = await signedIn();
    onTestFailed(() => shot(page, 'live-limits-failed'));
    // A client app registers its device by fetching the link with its HWID headers.
    const fetched = await fetch(link, {
      headers: {
        'user-agent': 'Happ/3.2.1',
        'x-hwid': 'a1b2c3d4e5f60718',
        'x-device-os': 'iOS',
        'x-ver-os': '18.1',
        'x-device-model': 'iPhone 15',
      },
    });
    expect(fetched.status).toBe(200);

    await page.goto(`${cp.http}/admin/subscriptions/${subscriptionId}`);
    const devices = page.getByTestId('subscription-devices');
    await devices.getByText('iPhone 15 · iOS 18.1').waitFor();
    await devices.getByText('No live connection right now.').waitFor();

    await page.getByRole('textbox', { name: 'Device limit' }).fill('2');
    await page.getByRole('textbox', { name: 'Download cap' }).fill('10');
    await page.getByRole('textbox', { name: 'Upload cap' }).fill('2.5');
    await expectAccessible(page, 'subscription limits');
    // The panel's PATCH answered, then its notice. (CI twice read the limits as null right after
    // "Saved." while the screenshot showed a submit still in flight: the PATCH requests are
    // counted, and the stored values read until they are the ones typed.)
    let patches = 0;
    page.on('request', (r) => {
      if (r.method() === 'PATCH' && r.url().includes(`/api/v1/subscriptions/${subscriptionId}`)) patches++;
    });
    const answered = page.waitForResponse(
      (r) => r.request().method() === 'PATCH' && r.url().includes(`/api/v1/subscriptions/${subscriptionId}`),
    );
    await page.getByRole('button', { name: 'Save' }).click();
    expect((await answered).status()).toBe(200);
    await page.getByText('Saved.', { exact: true }).first().waitFor();
    await expect
      .poll(async () => (await cp.api.get(`/api/v1/subscriptions/${subscriptionId}`)).body, {
        timeout: 20_000,
        message: `the stored limits (PATCH requests sent: ${patches})`,
      })
      .toMatchObject({ device_limit: 2, download_bps: 10_000_000, upload_bps: 2_500_000 });

    // Three addresses on the node's live connections against a limit of 2: the last seen is refused.
    agent?.send({ devices: { users: [{ subscriptionId, addresses: ['203.0.113.7', '198.51.100.20'] }] } });
    await devices.getByRole('row', { name: /203\.0\.113\.7/ }).waitFor({ timeout: 30_000 });
    agent?.send({ devices: { users: [{ subscriptionId, addresses: ['203.0.113.7', '198.51.100.20', '2001:db8:7:1::/64'] }] } });
    await devices.getByTestId('devices-denied').getByText('2001:db8:7:1::/64').waitFor({ timeout: 30_000 });
    await devices
      .getByRole('row', { name: /2001:db8:7:1::\/64/ })
      .getByText('Refused')
      .waitFor();
    expect(await devices.getByTestId('online-address').count()).toBe(3);
    await devices.getByTestId('device-count').getByText('3 online · 1 registered · limit 2').waitFor();
    await expectAccessible(page, 'subscription devices');
    await shot(page, 'live-limits-devices');

    // Removing the registered device frees its place.
    await devices.getByRole('button', { name: 'Remove iPhone 15 · iOS 18.1' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
    await devices.getByText('No client app has registered a device', { exact: false }).waitFor();
    const after = (await cp.api.get(`/api/v1/subscriptions/${subscriptionId}/devices`)).body;
    expect(after.registered).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('a node’s page says what its agent enforces and why not; a node whose agent reports nothing enforces none of the limits', async () => {
    const { page, errors } = await signedIn();
    onTestFailed(() => shot(page, 'live-limits-node-failed'));
    await page.goto(`${cp.http}/admin/nodes/${nodeId}`);
    const card = page.getByTestId('node-enforcement');
    await card.getByRole('row', { name: /Device limits.*Enforced.*access log/ }).waitFor();
    await card.getByRole('row', { name: /Speed caps.*Not enforced.*nft not found/ }).waitFor();
    await card.getByRole('row', { name: /Expiry and traffic while offline.*Enforced/ }).waitFor();
    await expectAccessible(page, 'node enforcement');
    await shot(page, 'live-limits-node');
    await page.goto(`${cp.http}/admin/nodes/${quietNodeId}`);
    await page.getByTestId('node-enforcement').getByText('Not enrolled yet', { exact: false }).waitFor();
    expect(errors).toEqual([]);
  });

  it('a plan carries the device limit and speed caps onto the subscriptions sold from it', async () => {
    const { page, errors } = await signedIn();
    onTestFailed(() => shot(page, 'live-limits-plan-failed'));
    await page.goto(`${cp.http}/admin/plans`);
    await page.getByRole('button', { name: /New plan/ }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('textbox', { name: 'Name' }).fill('Family 3 devices');
    await dialog.getByRole('textbox', { name: 'Device limit' }).fill('3');
    await dialog.getByRole('textbox', { name: 'Download cap' }).fill('50');
    await expectAccessible(page, 'plan form with limits');
    await dialog.getByRole('button', { name: /Save|Create/ }).click();
    await dialog.waitFor({ state: 'hidden' });
    const plans = (await cp.api.get('/api/v1/plans')).body.items as Array<Record<string, unknown>>;
    expect(plans.find((p) => p.name === 'Family 3 devices')).toMatchObject({ device_limit: 3, download_bps: 50_000_000, upload_bps: null });
    expect(errors).toEqual([]);
  });

  it('shows the devices right to left, in Persian, in the dark on a 390 px phone, and passes axe', async () => {
    const { page, errors } = await signedIn({ locale: 'fa-IR', width: 390, colorScheme: 'dark' });
    onTestFailed(() => shot(page, 'live-limits-fa-failed'));
    await page.goto(`${cp.http}/admin/subscriptions/${subscriptionId}`);
    await page.getByTestId('subscription-devices').getByText('نشانی‌های آنلاین').first().waitFor();
    await page.getByTestId('subscription-devices').scrollIntoViewIfNeeded();
    await expectAccessible(page, 'fa dark devices');
    await shot(page, 'live-limits-fa-dark-390');
    await page.goto(`${cp.http}/admin/nodes/${nodeId}`);
    await page.getByTestId('node-enforcement').getByText('اعمال نمی‌شود').waitFor();
    await expectAccessible(page, 'fa dark node enforcement');
    expect(errors).toEqual([]);
  });
});

import { type ControlPlane, fleetOverRest, startControlPlane } from '@svc/testkit';
import { AgentSimulator } from '@svc/testkit/agent-simulator';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { CHROMIUM, expectAccessible, launchBrowser, openPage, shot, signInWithPassword } from './browser.ts';

/**
 * The customer's devices in the portal (issue 36.1), in a real browser against `svc start`: two
 * apps registered their phones by the HWID headers of their link fetches, a third is refused
 * over the device limit of 2 (the documented answer) and registers nothing; the customer sees
 * "2 of 2" with the devices connected now from the node's report, removes the old phone, and
 * the third app's next fetch is served and registers it. axe on every screen; Persian right to left at 390 px.
 */

const CUSTOMER = { email: 'devices@example.com', password: 'devices-password-1' };

const fetchAs = (link: string, hwid: string, model: string) =>
  fetch(link, {
    headers: { 'user-agent': 'Happ/3.16.0', 'x-hwid': hwid, 'x-device-os': 'Android', 'x-ver-os': '14', 'x-device-model': model },
  });

describe.skipIf(!CHROMIUM)('the customer’s devices in the portal', () => {
  let cp: ControlPlane;
  let browser: Browser;
  let agent: AgentSimulator | undefined;
  let link: string;
  let subscriptionId: string;
  beforeAll(async () => {
    [cp, browser] = await Promise.all([startControlPlane(), launchBrowser()]);
    const api = cp.api;
    const node = await fleetOverRest.createNode(api, { name: 'edge-devices' });
    const profile = await fleetOverRest.createInboundProfile(api, 'vless-tcp');
    const inbound = await fleetOverRest.createInbound(api, { nodeId: node.id, profileId: profile.id, port: 24580 });
    const group = await fleetOverRest.createAccessGroup(api, [inbound.id]);
    const client = await api.post('/api/v1/clients', CUSTOMER);
    if (client.status !== 201) throw new Error(client.text);
    const sub = await fleetOverRest.createSubscription(api, { clientId: client.body.id, accessGroupIds: [group.id] });
    link = sub.link;
    subscriptionId = sub.id;
    const limited = await api.patch(`/api/v1/subscriptions/${sub.id}`, { device_limit: 2 });
    if (limited.status !== 200) throw new Error(limited.text);
    // The node reports two addresses on the customer's live connections.
    const token = (await api.post(`/api/v1/nodes/${node.id}/enroll-token`, undefined)).body;
    agent = await AgentSimulator.enroll({ endpoint: token.grpc_endpoint, caCertPem: token.ca_cert_pem, token: token.token });
    agent.connect();
  }, 120_000);
  afterAll(async () => {
    await agent?.disconnect().catch(() => {});
    await browser?.close();
    await cp?.stop();
  });

  it('two phones registered, a third refused; the customer removes the old one and the third gets in', async () => {
    expect((await fetchAs(link, 'hwid-old-phone-01', 'Galaxy S9')).status).toBe(200);
    expect((await fetchAs(link, 'hwid-tablet-0002', 'Galaxy Tab S8')).status).toBe(200);
    const refused = await fetchAs(link, 'hwid-new-phone-03', 'Pixel 9');
    expect(refused.headers.get('x-hwid-limit')).toBe('true');
    await refused.arrayBuffer();
    agent?.send({ devices: { users: [{ subscriptionId, addresses: ['203.0.113.7', '198.51.100.20'] }] } });

    const { page, errors } = await openPage(browser, { width: 390, height: 844 });
    onTestFailed(() => shot(page, 'devices-failed'));
    await page.goto(`${cp.http}/portal/`);
    await signInWithPassword(page, CUSTOMER);
    const devices = page.getByTestId('devices');
    await devices.getByText('2 of 2 devices registered', { exact: false }).waitFor();
    await devices.getByText('Galaxy S9 · Android 14').waitFor();
    await devices.getByText('Galaxy Tab S8 · Android 14').waitFor();
    expect(await devices.getByText('Pixel 9').count()).toBe(0);
    await page.reload();
    await devices.getByText('2 connected now', { exact: false }).waitFor({ timeout: 40_000 });
    await expectAccessible(page, 'devices');
    await shot(page, 'devices-390');

    await devices.getByRole('button', { name: 'Remove Galaxy S9 · Android 14' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove device' }).click();
    await devices.getByText('1 of 2 devices registered', { exact: false }).waitFor();
    await expectAccessible(page, 'devices after removal');

    // The third phone's next fetch is served and registers it.
    const served = await fetchAs(link, 'hwid-new-phone-03', 'Pixel 9');
    expect(served.headers.get('x-hwid-limit')).toBeNull();
    await served.arrayBuffer();
    const listed = (await cp.api.get(`/api/v1/subscriptions/${subscriptionId}/devices`)).body.registered.map(
      (d: { model: string }) => d.model,
    );
    expect(listed.sort()).toEqual(['Galaxy Tab S8', 'Pixel 9']);

    expect(errors).toEqual([]);
  });

  it('shows the devices right to left, in Persian, on a 390 px phone, and passes axe', async () => {
    const { page, errors } = await openPage(browser, { width: 390, height: 844, locale: 'fa-IR' });
    onTestFailed(() => shot(page, 'devices-fa-failed'));
    await page.goto(`${cp.http}/portal/`);
    await signInWithPassword(page, CUSTOMER, { email: 'ایمیل', password: 'گذرواژه', submit: 'ورود' });
    await page.getByTestId('devices').getByText('دستگاه‌ها').first().waitFor();
    expect(await page.evaluate('document.documentElement.dir')).toBe('rtl');
    await page.getByTestId('devices').scrollIntoViewIfNeeded();
    await expectAccessible(page, 'fa devices');
    await shot(page, 'devices-fa-390');
    expect(errors).toEqual([]);
  });
});

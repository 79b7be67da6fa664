import { type ControlPlane, startControlPlane } from '@svc/testkit';
import { AgentSimulator } from '@svc/testkit/agent-simulator';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { CHROMIUM, launchBrowser, openPage, seriousViolations, shot } from './browser.ts';

/**
 * A node's traffic multiplier and quota in the panel (issue 35.4), in a real browser against
 * `svc start` with an agent reporting usage over its stream: the node's page shows what it
 * carried and charged, its settings dialog sets the multiplier and the quota, a node over its quota is marked limited on its page and in the
 * list, and the subscription's usage by node shows the raw bytes beside the charged ones. axe on
 * every screen, and the limited node right to left in the dark at 390 px.
 */

const OWNER = { email: 'traffic-owner@example.com', password: 'traffic-owner-password-1' };
const GIB = 1024 ** 3;

async function expectAccessible(page: Page, screen: string) {
  const violations = await seriousViolations(page);
  expect(violations, `${screen}: ${JSON.stringify(violations, null, 2)}`).toEqual([]);
}

describe.skipIf(!CHROMIUM)('a node’s traffic multiplier and quota in the panel', () => {
  let cp: ControlPlane;
  let browser: Browser;
  let agent: AgentSimulator | undefined;
  let nodeId: string;
  let subscriptionId: string;
  beforeAll(async () => {
    [cp, browser] = await Promise.all([startControlPlane({ owner: OWNER }), launchBrowser()]);
    const api = cp.api;
    const node = (await api.post('/api/v1/nodes', { name: 'mobile-edge', address: '127.0.0.3' })).body;
    nodeId = node.id;
    const profile = (
      await api.post('/api/v1/inbound-profiles', { name: 'vless-tcp', protocol: 'vless', stream: { network: 'tcp', security: 'none' } })
    ).body;
    const inbound = (await api.post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 20444 })).body;
    const group = (await api.post('/api/v1/access-groups', { name: 'mobile', inbound_ids: [inbound.id] })).body;
    const client = (await api.post('/api/v1/clients', { email: 'rider@example.com' })).body;
    subscriptionId = (await api.post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] })).body.id;
    const token = (await api.post(`/api/v1/nodes/${node.id}/enroll-token`, undefined)).body;
    agent = await AgentSimulator.enroll({ endpoint: token.grpc_endpoint, caCertPem: token.ca_cert_pem, token: token.token });
    agent.connect();
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

  it('sets the multiplier and the quota from the node’s page; usage charges double; a node over its quota is shown limited until the quota is removed', async () => {
    const { page, errors } = await signedIn();
    onTestFailed(() => shot(page, 'node-traffic-failed'));
    await page.goto(`${cp.http}/admin/nodes/${nodeId}`);
    await page.getByRole('heading', { level: 2, name: 'mobile-edge' }).waitFor();
    const card = page.getByTestId('node-traffic');
    await card.getByText('× 1', { exact: true }).waitFor();
    await card.getByText('No quota', { exact: false }).waitFor();

    // The dialog: a multiplier of 2 and a 1 GiB daily quota.
    await page.getByTestId('edit-node').click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('textbox', { name: 'Traffic multiplier' }).fill('2');
    await dialog.getByLabel('Traffic quota', { exact: true }).click();
    await page.getByRole('option', { name: 'Limited', exact: true }).click();
    await dialog.getByRole('textbox', { name: 'Limit in GiB' }).fill('1');
    await dialog.getByLabel('Quota resets', { exact: true }).click();
    await page.getByRole('option', { name: 'daily', exact: true }).click();
    await expectAccessible(page, 'node settings');
    await shot(page, 'node-traffic-settings');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await card.getByText('× 2', { exact: true }).waitFor();
    const saved = (await cp.api.get(`/api/v1/nodes/${nodeId}`)).body;
    expect(saved).toMatchObject({ traffic_multiplier: 2, traffic_quota_bytes: GIB, traffic_quota_renewal: 'day' });

    // Usage over the agent's stream: 300 MiB up and 900 MiB down charge double and bring the node past its quota.
    await agent?.sendUsage(1n, [{ subscriptionId, uplinkBytes: 300n * 2n ** 20n, downlinkBytes: 900n * 2n ** 20n }]);
    await page.getByTestId('node-limited').waitFor();
    await page.getByText('Traffic quota reached').waitFor();
    await card.getByText('1.2 GB of 1 GB this period').waitFor();
    await card.getByText('2.3 GB', { exact: true }).waitFor();
    await expectAccessible(page, 'limited node');
    await shot(page, 'node-traffic-limited');

    await page.goto(`${cp.http}/admin/nodes`);
    await page
      .getByRole('row', { name: /mobile-edge/ })
      .getByText('limited')
      .waitFor();
    await expectAccessible(page, 'nodes with a limited one');

    // The subscription's usage by node: charged by direction, and what the node carried.
    await page.goto(`${cp.http}/admin/subscriptions/${subscriptionId}`);
    const byNode = page.getByTestId('usage-by-node');
    await byNode.getByRole('row', { name: /mobile-edge/ }).waitFor();
    expect(
      await byNode
        .getByRole('row', { name: /mobile-edge/ })
        .getByRole('cell')
        .allTextContents(),
    ).toEqual(['mobile-edge', '600 MB', '1.8 GB', '1.2 GB']);
    await expectAccessible(page, 'usage by node');

    // The quota removed: the node is back at once.
    await page.goto(`${cp.http}/admin/nodes/${nodeId}`);
    await page.getByTestId('node-limited').waitFor();
    await page.getByTestId('edit-node').click();
    await dialog.getByLabel('Traffic quota', { exact: true }).click();
    await page.getByRole('option', { name: 'Unlimited', exact: true }).click();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByTestId('node-limited').waitFor({ state: 'detached' });
    expect((await cp.api.get(`/api/v1/nodes/${nodeId}`)).body.traffic.limited_since).toBeNull();
    expect(errors).toEqual([]);
  });

  it('shows a limited node right to left, in Persian, in the dark on a 390 px phone, and passes axe', async () => {
    const limited = await cp.api.patch(`/api/v1/nodes/${nodeId}`, { traffic_quota_bytes: 0 });
    expect(limited.body.traffic.limited_since).not.toBeNull();
    const { page, errors } = await signedIn({ locale: 'fa-IR', width: 390, colorScheme: 'dark' });
    onTestFailed(() => shot(page, 'node-traffic-fa-failed'));
    await page.goto(`${cp.http}/admin/nodes/${nodeId}`);
    await page.getByRole('heading', { level: 2, name: 'mobile-edge' }).waitFor();
    await page.getByText('سهمیهٔ ترافیک پر شد').waitFor();
    await expectAccessible(page, 'fa dark limited node');
    await shot(page, 'node-traffic-fa-dark-390');
    expect(errors).toEqual([]);
  });
});

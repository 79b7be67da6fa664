import { type ControlPlane, startControlPlane } from '@svc/testkit';
import { AgentSimulator } from '@svc/testkit/agent-simulator';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { CHROMIUM, launchBrowser, openPage, seriousViolations, shot } from './browser.ts';

/**
 * The operator's path through the panel in a real browser against the real system (`svc start`):
 * a fresh installation set up through the setup screen, then a node (its page shows the one-line
 * install command; an agent connecting turns it online on screen without a reload; its agent is
 * upgraded, failing once, from the page), a profile, an inbound, a group, a client and a
 * subscription whose QR and link are shown and whose /sub answers. Every screen passes axe
 * (no serious or critical violation). Run at 1280 px and at 390 px (a phone: the navigation
 * folds behind the menu button).
 */

const OWNER = { email: 'panel-owner@example.com', password: 'panel-owner-password-1' };

async function expectAccessible(page: Page, screen: string) {
  const violations = await seriousViolations(page);
  expect(violations, `${screen}: ${JSON.stringify(violations, null, 2)}`).toEqual([]);
}

/** Opens a section from the navigation column (behind the menu button on a narrow screen). */
async function openSection(page: Page, name: string) {
  const burger = page.getByRole('button', { name: 'Main menu' });
  if (await burger.isVisible()) await burger.click();
  await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name }).click();
  await page.getByRole('heading', { level: 2, name }).waitFor();
}

/** Picks an option of a select (or multi-select) in the open dialog. */
async function choose(page: Page, label: string, option: string | RegExp) {
  await page.getByRole('dialog').getByRole('textbox', { name: label }).or(page.getByRole('dialog').getByLabel(label)).first().click();
  await page.getByRole('option', { name: option }).click();
}

for (const width of [1280, 390]) {
  describe.skipIf(!CHROMIUM)(`the operator's path in the panel at ${width} px`, () => {
    let cp: ControlPlane;
    let browser: Browser;
    const agents: AgentSimulator[] = [];
    beforeAll(async () => {
      [cp, browser] = await Promise.all([startControlPlane({ skipSetup: true, owner: OWNER }), launchBrowser()]);
    }, 120_000);
    afterAll(async () => {
      for (const a of agents) await a.disconnect().catch(() => {});
      await browser?.close();
      await cp?.stop();
    });

    it('sets up a fresh installation through the screens and reaches a working subscription link', async () => {
      const { page, errors } = await openPage(browser, { width });
      const tag = `w${width}`;
      onTestFailed(() => shot(page, `${tag}-failed`));

      // / sends a person to the panel; a fresh installation shows the setup screen.
      await page.goto(`${cp.http}/`);
      await page.getByRole('heading', { name: 'Set up this installation' }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/admin/');
      await expectAccessible(page, 'setup');
      await shot(page, `${tag}-01-setup`);
      await page.getByLabel('Setup token').fill(cp.setupToken);
      await page.getByLabel('Email').fill(OWNER.email);
      await page.getByRole('textbox', { name: 'Password' }).fill(OWNER.password);
      await page.getByRole('button', { name: 'Create the owner and sign in' }).click();
      await page.getByRole('heading', { level: 2, name: 'Dashboard' }).waitFor();
      await expectAccessible(page, 'dashboard');
      await shot(page, `${tag}-02-dashboard`);

      // Nodes: add one; its page issues the enrollment token and shows the commands.
      await openSection(page, 'Nodes');
      await expectAccessible(page, 'nodes (empty)');
      await page.getByTestId('create-node').click();
      await page.getByRole('dialog').getByLabel('Name').fill('edge-1');
      await page.getByRole('dialog').getByLabel('Address').fill('127.0.0.1');
      await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click();
      await page.getByRole('heading', { level: 2, name: 'edge-1' }).waitFor();
      const issued = page.waitForResponse((r) => r.url().endsWith('/enroll-token') && r.request().method() === 'POST');
      await page.getByTestId('issue-enroll-token').click();
      const token = (await (await issued).json()) as {
        token: string;
        grpc_endpoint: string;
        ca_cert_pem: string;
        ca_cert_sha256: string;
        install_command: string;
      };
      // The one line to run as root, exactly as the API answered, with its copy button; the checkout's commands folded below.
      const install = page.getByTestId('install-command');
      await install.waitFor();
      const shown = (await install.textContent()) as string;
      expect(shown).toBe(token.install_command);
      expect(shown).toMatch(/^curl -fsSL http/);
      expect(shown).toContain(`/agent/install.sh | sh -s -- --token ${token.token} `);
      expect(shown).toContain(`--ca-sha256 ${token.ca_cert_sha256}`);
      expect(await page.getByTestId('copy-install-command').isVisible()).toBe(true);
      const commands = page.getByTestId('enroll-commands');
      expect(await commands.textContent()).toContain('--engine-bin /usr/bin/v2ray --engine-api v2ray');
      const checkout = page.getByTestId('checkout-commands');
      expect(await checkout.getAttribute('open')).toBeNull();
      expect(await checkout.textContent()).toContain(`svc-agent enroll --server ${token.grpc_endpoint} --token ${token.token}`);
      expect(await page.getByText('offline').first().isVisible()).toBe(true);
      await expectAccessible(page, 'node');
      await shot(page, `${tag}-03-node-enroll`);

      // An agent enrolls with that token and connects: the page turns online without a reload.
      // It names itself 0.1.0: an svc-agent older than the release this control plane serves.
      const agent = await AgentSimulator.enroll({
        endpoint: token.grpc_endpoint,
        caCertPem: token.ca_cert_pem,
        token: token.token,
        agentVersion: '0.1.0',
      });
      agents.push(agent);
      // A mark on the page's window: a reload would lose it.
      await page.evaluate('window.__svcSamePage = true');
      const connectedAt = Date.now();
      agent.connect();
      await page.getByText('online', { exact: true }).first().waitFor({ timeout: 10_000 });
      // Live (GET /api/v1/events), not a blind poll: within 2 s of the stream opening (the simulator's enrollment done before).
      expect(Date.now() - connectedAt).toBeLessThan(2_000);
      expect(await page.evaluate('window.__svcSamePage === true')).toBe(true);
      await shot(page, `${tag}-04-node-online`);

      // The page offers the newer release; the upgrade is pending until the agent answers, and the page follows it live.
      const release = (await cp.api.get(`/api/v1/nodes/${agent.nodeId}`)).body.agent_upgrade_available as string;
      expect(release).toMatch(/^\d+\.\d+\.\d+/);
      await expect.poll(() => page.getByTestId('agent-update-available').textContent()).toBe(`update available: ${release}`);
      // The list says so beside the agent's version too.
      await openSection(page, 'Nodes');
      await expect.poll(() => page.getByTestId('agent-update-available').textContent()).toBe(`update available: ${release}`);
      await expectAccessible(page, 'nodes (update available)');
      await shot(page, `${tag}-04a-nodes-update-available`);
      await page.getByRole('link', { name: 'edge-1' }).click();
      await page.getByRole('heading', { level: 2, name: 'edge-1' }).waitFor();
      // The simulator records commands without answering them: this test answers for it, as the agent would.
      agent.ignoreCommands = true;
      const upgradeCommand = async (n: number) => {
        const asked = page.waitForResponse((r) => r.url().endsWith('/upgrade-agent') && r.request().method() === 'POST');
        await page.getByTestId('upgrade-agent').click();
        const accepted = await asked;
        expect(accepted.status()).toBe(202);
        expect(((await accepted.json()) as { version: string }).version).toBe(release);
        await page.getByTestId('agent-upgrade-pending').getByText(`Upgrading to ${release}…`).waitFor();
        expect(await page.getByTestId('upgrade-agent').isDisabled()).toBe(true);
        const sent = () => agent.commands.filter((c) => c.upgradeAgent);
        await agent.waitFor(() => sent().length >= n, 10_000, `upgrade_agent #${n}`);
        const command = sent()[n - 1] as (typeof agent.commands)[number];
        expect(command.upgradeAgent).toMatchObject({ version: release, url: expect.stringContaining(`/agent/${release}/`) });
        expect(command.upgradeAgent?.sha256).toMatch(/^[0-9a-f]{64}$/);
        return command.commandId;
      };
      // It fails: the agent's words in red, with the version asked; the old agent runs on and the offer stays.
      const first = await upgradeCommand(1);
      const why = 'the downloaded file does not match its SHA-256';
      agent.send({ upgradeResult: { commandId: first, success: false, error: why, agentVersion: '0.1.0' } });
      const failed = page.getByTestId('agent-upgrade-failed');
      await failed.waitFor();
      expect(await failed.textContent()).toContain(`Upgrade to ${release} failed`);
      expect(await failed.textContent()).toContain(why);
      await page.getByTestId('upgrade-agent').and(page.locator(':enabled')).waitFor();
      await expectAccessible(page, 'node (upgrade failed)');
      await shot(page, `${tag}-04b-node-upgrade-failed`);
      // Again: the new agent comes back naming the release and says it succeeded.
      const second = await upgradeCommand(2);
      await agent.disconnect();
      agent.opts.agentVersion = release;
      agent.connect();
      agent.send({ upgradeResult: { commandId: second, success: true, error: '', agentVersion: release } });
      await page.getByTestId('agent-upgrade-succeeded').getByText(`Upgraded to ${release} at`).waitFor();
      await expect.poll(() => page.getByTestId('agent-update-available').count()).toBe(0);
      expect(await page.getByTestId('upgrade-agent').count()).toBe(0);
      expect(await failed.count()).toBe(0);
      await page.getByText('online', { exact: true }).first().waitFor();
      agent.ignoreCommands = false;
      await expectAccessible(page, 'node (upgraded)');
      await shot(page, `${tag}-04c-node-upgraded`);

      // A profile (VLESS over TCP, no security), an inbound on the node, a group holding it.
      await openSection(page, 'Inbound profiles');
      await page.getByTestId('create-profile').click();
      await page.getByRole('dialog').getByLabel('Name').fill('vless-tcp');
      await expectAccessible(page, 'profile form');
      await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click();
      await page
        .getByRole('link', { name: 'vless-tcp' })
        .or(page.getByRole('button', { name: 'vless-tcp' }))
        .waitFor();
      await expectAccessible(page, 'profiles');

      await openSection(page, 'Inbounds');
      await page.getByTestId('create-inbound').click();
      await choose(page, 'Node', 'edge-1');
      await choose(page, 'Profile', /vless-tcp/);
      await page.getByRole('dialog').getByRole('textbox', { name: 'Port' }).fill('24431');
      await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click();
      await page.getByRole('cell', { name: 'vless-24431', exact: true }).waitFor();
      await expectAccessible(page, 'inbounds');

      await openSection(page, 'Access groups');
      await page.getByTestId('create-group').click();
      await page.getByRole('dialog').getByLabel('Name').fill('everyone');
      await choose(page, 'Inbounds', /vless-24431/);
      await page.keyboard.press('Escape');
      await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click();
      await page.getByRole('button', { name: 'everyone' }).waitFor();
      await expectAccessible(page, 'groups');

      // A client, then its subscription (the create form opens with the client filled in).
      await openSection(page, 'Clients');
      await page.getByTestId('create-client').click();
      await page.getByRole('dialog').getByLabel('Email').fill('customer@example.com');
      await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click();
      await page.getByRole('dialog', { name: 'New subscription' }).waitFor();
      await expect.poll(() => page.getByRole('dialog').getByLabel("Client's email").inputValue()).toBe('customer@example.com');
      await choose(page, 'Access groups', 'everyone');
      await page.keyboard.press('Escape');
      await expectAccessible(page, 'subscription form');
      await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click();
      await page.getByRole('heading', { level: 3, name: 'Subscription link' }).waitFor();
      const link = (await page.getByTestId('subscription-link').textContent()) as string;
      expect(link).toMatch(/\/sub\/[A-Za-z0-9_-]+$/);
      const qr = page.getByRole('img', { name: 'QR code of the subscription link' });
      await qr.waitFor();
      expect(await qr.getAttribute('data-qr-value')).toBe(link);
      expect(await qr.getAttribute('src')).toMatch(/^data:image\/png;base64,/);
      await expectAccessible(page, 'subscription');
      await shot(page, `${tag}-05-subscription`);

      // The link answers with the inbound the subscription reaches.
      const sub = await fetch(link, { headers: { 'user-agent': 'v2rayNG/1.9.0' } });
      expect(sub.status).toBe(200);
      const body = Buffer.from(await sub.text(), 'base64').toString('utf8');
      expect(body).toMatch(/^vless:\/\/[^@]+@127\.0\.0\.1:24431\?/m);

      // The dashboard counts what was built.
      await openSection(page, 'Dashboard');
      await expect.poll(() => page.getByRole('region', { name: 'Nodes online' }).textContent()).toContain('1 / 1');
      expect(errors).toEqual([]);
    });
  });
}

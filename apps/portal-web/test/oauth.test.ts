import { type ControlPlane, freePort, startControlPlane } from '@svc/testkit';
import { type OidcTestProvider, startOidcTestProvider } from '@svc/testkit/oidc-test-provider';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { CHROMIUM, expectAccessible, launchBrowser, openPage, shot } from './browser.ts';

/**
 * Signing in with a provider and the linked providers in the settings, in a real browser against
 * the real system and a real OpenID provider (oidc-provider): "Continue with acme" walks the
 * provider's pages and lands signed in (mode open: the account is made); the settings list the
 * provider as linked; unlinked, then linked again from the settings, the callback comes back to
 * the settings and says so; fresh from the provider, a password is set without a current one.
 */

const PROVIDER = 'acme';

describe.skipIf(!CHROMIUM)('the portal with an OpenID provider', () => {
  let cp: ControlPlane;
  let oidc: OidcTestProvider;
  let browser: Browser;
  beforeAll(async () => {
    // The provider registers the callback URL, so the control plane's address is chosen first.
    const httpPort = await freePort();
    oidc = await startOidcTestProvider({ redirectUris: [`http://127.0.0.1:${httpPort}/portal/v1/auth/oauth/${PROVIDER}/callback`] });
    oidc.accounts.set('acme-user-1', { email: 'oauth-customer@example.com', email_verified: true });
    [cp, browser] = await Promise.all([
      startControlPlane({
        httpPort,
        env: {
          SVC_PORTAL_REGISTRATION: 'open',
          SVC_PORTAL_OAUTH_ACME_ISSUER: oidc.issuer,
          SVC_PORTAL_OAUTH_ACME_CLIENT_ID: oidc.clientId,
          SVC_PORTAL_OAUTH_ACME_CLIENT_SECRET: oidc.clientSecret,
        },
      }),
      launchBrowser(),
    ]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await cp?.stop();
    await oidc?.close();
  });

  it('continue with the provider: signed in, the account made; in the settings: linked, unlinked, linked again; a password set fresh from the provider', async () => {
    const { page, context, errors } = await openPage(browser, { width: 390, height: 844 });
    onTestFailed(() => shot(page, 'oauth-failed'));
    await page.goto(`${cp.http}/portal/`);
    oidc.signInNextAs('acme-user-1');
    await page.getByRole('link', { name: `Continue with ${PROVIDER}` }).click();
    await page.getByRole('heading', { name: 'My subscriptions' }).waitFor();
    expect(await page.getByTestId('signed-in-as').textContent()).toBe('Signed in as oauth-customer@example.com');
    expect(new URL(page.url()).pathname).toBe('/portal/');

    await page.getByTestId('nav-settings').click();
    const card = page.getByTestId('settings-identities');
    const row = card.getByTestId(`identity-${PROVIDER}`);
    await row.getByText('Linked as oauth-customer@example.com', { exact: false }).waitFor();
    await expectAccessible(page, 'settings (provider linked)');
    await shot(page, 'en-390-31-settings-oauth');

    // Unlink, then link again from here: the provider's pages, then back to the settings.
    await row.getByRole('button', { name: 'Unlink' }).click();
    await row.getByText('Not linked').waitFor();
    expect((await cp.api.get('/api/v1/clients?email=oauth-customer%40example.com')).body.items).toHaveLength(1);
    oidc.signInNextAs('acme-user-1');
    await row.getByRole('button', { name: 'Link' }).click();
    await page.waitForURL(`${cp.http}/portal/settings**`);
    await card.getByTestId('linked').waitFor();
    await row.getByText('Linked as oauth-customer@example.com', { exact: false }).waitFor();
    expect(new URL(page.url()).hash).toBe('');

    // No password yet; within minutes of the provider's sign-in a new one needs no current one.
    const password = page.getByTestId('settings-password');
    await password.getByRole('heading', { name: 'Set a password' }).waitFor();
    expect(await password.getByRole('textbox', { name: 'Current password' }).count()).toBe(0);
    await password.getByRole('textbox', { name: 'New password', exact: true }).fill('oauth-password-1');
    await password.getByRole('textbox', { name: 'Repeat the new password' }).fill('oauth-password-1');
    await password.getByTestId('save-password').click();
    await password.getByTestId('password-saved').waitFor();
    await password.getByRole('heading', { name: 'Change your password' }).waitFor();
    const login = await fetch(`${cp.http}/portal/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'oauth-customer@example.com', password: 'oauth-password-1' }),
    });
    expect(login.status).toBe(200);
    await expectAccessible(page, 'settings (password set)');
    expect(errors).toEqual([]);
    await context.close();
  });
});

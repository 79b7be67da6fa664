import { type OidcTestProvider, startOidcTestProvider } from '@svc/testkit/oidc-test-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PortalTestServer, startPortal } from './harness.ts';

// OAuth providers under the outbound policy (issue 29.2; docs/threat-model.md, "Outbound calls"):
// OIDC discovery and every provider endpoint go through the outbound client, so a provider
// configured at 127.0.0.1 is refused until the owner allows private networks, and one at a
// metadata address is refused whatever the setting.
const BASE = 'https://panel.example.test';
let idp: OidcTestProvider;
let p: PortalTestServer;
beforeAll(async () => {
  idp = await startOidcTestProvider({ redirectUris: [`${BASE}/portal/v1/auth/oauth/corp/callback`] });
  const provider = (name: string, issuer: string) => ({
    [`SVC_PORTAL_OAUTH_${name}_CLIENT_ID`]: idp.clientId,
    [`SVC_PORTAL_OAUTH_${name}_CLIENT_SECRET`]: idp.clientSecret,
    [`SVC_PORTAL_OAUTH_${name}_ISSUER`]: issuer,
  });
  p = await startPortal({
    // '' unsets the testkit's default: the installation setting decides, off until the owner says.
    SVC_OUTBOUND_ALLOW_PRIVATE_NETWORKS: '',
    SVC_PUBLIC_BASE_URL: BASE,
    ...provider('CORP', idp.issuer),
    ...provider('META', 'http://169.254.169.254/oidc'),
  });
});
afterAll(async () => {
  await p?.stop();
  await idp?.close();
});

const redirect = (name: string) => fetch(`${p.s.url}/portal/v1/auth/oauth/${name}/redirect`, { redirect: 'manual' });
const allowPrivate = async (value: boolean) =>
  expect((await p.s.api.patch('/api/v1/settings/outbound', { allow_private_networks: value }, { token: p.token })).status).toBe(200);

describe('OAuth providers the server may reach', () => {
  it('an issuer on 127.0.0.1 is not asked for its discovery until the owner allows private networks: 503, nothing stored', async () => {
    const res = await redirect('corp');
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(await p.s.deps.db.selectFrom('oauth_requests').select('state_hash').execute()).toEqual([]);
    await allowPrivate(true);
    try {
      const allowed = await redirect('corp');
      expect(allowed.status).toBe(302);
      expect(allowed.headers.get('location')).toMatch(new RegExp(`^${idp.issuer}/`));
    } finally {
      await allowPrivate(false);
    }
  });

  it('an issuer at 169.254.169.254 is refused whatever the setting', async () => {
    await allowPrivate(true);
    try {
      const res = await redirect('meta');
      expect(res.status).toBe(503);
      expect(((await res.json()) as { detail: string }).detail).not.toMatch(/ECONN|169\.254/);
    } finally {
      await allowPrivate(false);
    }
  });
});

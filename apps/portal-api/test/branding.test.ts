import { DEFAULT_APP_ORDER } from '@svc/client-apps';
import { LOGO_MAX_BYTES } from '@svc/domain';
import { adminWithRole } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PortalTestServer, startPortal } from './harness.ts';

/**
 * The operator's brand on the customer pages (issue 32 item 6): owners set it at
 * PATCH /api/v1/settings/customer-pages; anyone reads it, resolved, at GET /portal/v1/branding
 * (the portal shows it before sign-in; the /sub page uses the same). What is not valid changes
 * nothing and says which field.
 */
let p: PortalTestServer;
beforeAll(async () => {
  p = await startPortal({ SVC_PUBLIC_BASE_URL: 'https://shop.example.com' });
});
afterAll(() => p?.stop());

// The smallest valid PNG and WebP headers with some bytes after them.
const PNG = `data:image/png;base64,${Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(100, 7)]).toString('base64')}`;
const patch = (body: unknown, token = p.token) => p.s.api.patch('/api/v1/settings/customer-pages', body, { token });
const branding = async () => (await p.s.api.get('/portal/v1/branding')).body;

describe('the customer pages’ brand', () => {
  it('defaults: the public host as the name, every platform’s default app order; read without signing in', async () => {
    const res = await p.s.api.get('/portal/v1/branding');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'shop.example.com',
      logo: null,
      primary_color: null,
      support_url: null,
      announcement: null,
      texts: {},
    });
    for (const [platform, ids] of Object.entries(DEFAULT_APP_ORDER)) expect(res.body.apps[platform]).toEqual([...ids]);
  });

  it('an owner sets name, logo, colour, support link, announcement, the apps of a platform and texts per language; the portal shows them', async () => {
    const res = await patch({
      name: 'Fast VPN',
      logo: PNG,
      primary_color: '#12ab34',
      support_url: 'https://t.me/fastvpn_support',
      announcement: 'Maintenance on Sunday 02:00 UTC',
      apps: { ios: ['streisand', 'happ'] },
      texts: { ru: { welcome: 'Быстрый VPN', announcement: 'Работы в воскресенье' } },
    });
    expect(res.status, res.text).toBe(200);
    const shown = await branding();
    expect(shown).toMatchObject({
      name: 'Fast VPN',
      logo: PNG,
      primary_color: '#12ab34',
      support_url: 'https://t.me/fastvpn_support',
      announcement: 'Maintenance on Sunday 02:00 UTC',
      texts: { ru: { welcome: 'Быстрый VPN', announcement: 'Работы в воскресенье' } },
    });
    expect(shown.apps.ios).toEqual(['streisand', 'happ']);
    expect(shown.apps.android).toEqual([...DEFAULT_APP_ORDER.android]);
    // A merge: one field changes, the rest stay; null removes.
    expect((await patch({ announcement: null })).status).toBe(200);
    expect(await branding()).toMatchObject({ name: 'Fast VPN', announcement: null, primary_color: '#12ab34' });
    expect((await p.s.api.get('/api/v1/settings/customer-pages', { token: p.token })).body).toMatchObject({
      name: 'Fast VPN',
      apps: { ios: ['streisand', 'happ'] },
    });
  });

  it('refuses what is not valid, naming the field, and changes nothing', async () => {
    const before = await branding();
    const svg = `data:image/svg+xml;base64,${Buffer.from('<svg onload="alert(1)"/>').toString('base64')}`;
    const mislabelled = `data:image/png;base64,${Buffer.from('GIF89a............').toString('base64')}`;
    const huge = `data:image/png;base64,${Buffer.concat([Buffer.from(PNG.slice(22), 'base64'), Buffer.alloc(LOGO_MAX_BYTES)]).toString('base64')}`;
    const bad: Array<[unknown, string]> = [
      [{ logo: svg }, 'logo'],
      [{ logo: mislabelled }, 'logo'],
      [{ logo: huge }, 'logo'],
      [{ logo: 'https://cdn.example.com/logo.png' }, 'logo'],
      [{ primary_color: 'red' }, 'primary_color'],
      [{ support_url: 'javascript:alert(1)' }, 'support_url'],
      [{ name: '   ' }, 'name'],
      [{ name: 'x'.repeat(61) }, 'name'],
      [{ apps: { ios: ['v2rayng'] } }, 'apps'],
      [{ apps: { ios: ['happ', 'happ'] } }, 'apps'],
      [{ apps: { smart_fridge: ['happ'] } }, 'apps'],
      [{ texts: { de: { welcome: 'Hallo' } } }, 'texts'],
      [{ unknown: 1 }, ''],
    ];
    for (const [body, field] of bad) {
      const res = await patch(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      if (field) expect(JSON.stringify(res.body.errors ?? {}), JSON.stringify(body).slice(0, 80)).toContain(field);
    }
    expect(await branding()).toEqual(before);
  });

  it('installation settings are the owner’s: an admin or viewer is refused (403), a customer token too (401/403)', async () => {
    const admin = (await adminWithRole(p.s, p.token, 'admin')).access_token;
    const viewer = (await adminWithRole(p.s, p.token, 'viewer')).access_token;
    expect((await patch({ name: 'Theirs' }, admin)).status).toBe(403);
    expect((await patch({ name: 'Theirs' }, viewer)).status).toBe(403);
    expect((await p.s.api.get('/api/v1/settings/customer-pages', { token: viewer })).status).toBe(200);
    expect((await branding()).name).not.toBe('Theirs');
  });
});

import { adminWithRole, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// Spec 5.4: owners have everything, "plus managing admins and installation settings".

let s: TestServer;
let owner: string;
beforeAll(async () => {
  s = await startAdminApi();
  owner = (await setupOwner(s)).access_token;
});
afterAll(() => s.stop());

describe('installation settings are owner-only (spec 5.4)', () => {
  it('every write under /api/v1/settings declares the owner role alone', async () => {
    const doc = (await s.api.get('/api/v1/openapi.json')).body as { paths: Record<string, Record<string, { 'x-roles'?: string[] }>> };
    // The User-Agent tester (POST …/preview) writes nothing: every admin may try a User-Agent.
    const writes = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/api/v1/settings') && !path.endsWith('/preview'))
      .flatMap(([path, ops]) =>
        Object.entries(ops)
          .filter(([m]) => m !== 'get')
          .map(([m, op]) => [`${m} ${path}`, op['x-roles']] as const),
      );
    expect(writes.length).toBeGreaterThan(0);
    for (const [op, roles] of writes) expect(roles, op).toEqual(['owner']);
  });

  it('PATCH /settings/subscription-link: 403 for an admin and a viewer, nothing written; 200 for the owner; everyone may read', async () => {
    const admin = (await adminWithRole(s, owner, 'admin')).access_token;
    const viewer = (await adminWithRole(s, owner, 'viewer')).access_token;
    const before = await s.api.get('/api/v1/settings/subscription-link', { token: owner });
    for (const token of [admin, viewer]) {
      const res = await s.api.patch('/api/v1/settings/subscription-link', { title: 'not yours' }, { token });
      expect(res.status, res.text).toBe(403);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect((await s.api.get('/api/v1/settings/subscription-link', { token })).status).toBe(200);
    }
    expect((await s.api.get('/api/v1/settings/subscription-link', { token: owner })).body).toEqual(before.body);
    const res = await s.api.patch('/api/v1/settings/subscription-link', { title: 'Acme VPN' }, { token: owner });
    expect(res.status, res.text).toBe(200);
    expect(res.body.title).toBe('Acme VPN');
  });
});

import { adminWithRole, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// GET/PATCH /api/v1/settings/outbound (issue 29.2): whether webhooks, ACME, DNS, OAuth and payment
// APIs may be reached at loopback and private addresses. Off by default, the owner's to change,
// overridden by the configuration (SVC_OUTBOUND_ALLOW_PRIVATE_NETWORKS).
let s: TestServer;
let pinned: TestServer;
let owner: string;
beforeAll(async () => {
  // '' unsets the testkit's default, which allows private networks for the stand-ins.
  s = await startAdminApi({ env: { SVC_OUTBOUND_ALLOW_PRIVATE_NETWORKS: '' } });
  owner = (await setupOwner(s)).access_token;
  pinned = await startAdminApi({ env: { SVC_OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' } });
});
afterAll(async () => {
  await s?.stop();
  await pinned?.stop();
});

const problemOf = (res: { status: number; headers: Headers }) => [res.status, res.headers.get('content-type')?.split(';')[0]];

describe('PATCH /api/v1/settings/outbound', () => {
  it('private networks are refused by default; everyone signed in may read it', async () => {
    const viewer = (await adminWithRole(s, owner, 'viewer')).access_token;
    for (const token of [owner, viewer]) {
      const res = await s.api.get('/api/v1/settings/outbound', { token });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ allow_private_networks: false, set_by: 'settings' });
    }
    expect((await s.api.get('/api/v1/settings/outbound')).status).toBe(401);
  });

  it('an admin or a viewer is 403 and nothing changes; the owner allows them (audited)', async () => {
    for (const role of ['admin', 'viewer'] as const) {
      const token = (await adminWithRole(s, owner, role)).access_token;
      const res = await s.api.patch('/api/v1/settings/outbound', { allow_private_networks: true }, { token });
      expect(problemOf(res)).toEqual([403, 'application/problem+json']);
    }
    expect((await s.api.get('/api/v1/settings/outbound', { token: owner })).body.allow_private_networks).toBe(false);
    const res = await s.api.patch('/api/v1/settings/outbound', { allow_private_networks: true }, { token: owner });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ allow_private_networks: true, set_by: 'settings' });
    const audit = await s.api.get('/api/v1/audit-log?entity_id=outbound', { token: owner });
    expect(audit.body.items[0]).toMatchObject({ action: 'settings.updated', details: { allow_private_networks: true } });
    expect((await s.api.patch('/api/v1/settings/outbound', { allow_private_networks: false }, { token: owner })).status).toBe(200);
  });

  it('bad input is a problem naming the field and changes nothing', async () => {
    for (const body of [{ allow_private_networks: 'yes' }, { allow_private_networks: 1 }, { allow_loopback: true }, []]) {
      const res = await s.api.patch('/api/v1/settings/outbound', body, { token: owner });
      expect(problemOf(res), JSON.stringify(body)).toEqual([400, 'application/problem+json']);
    }
    expect((await s.api.get('/api/v1/settings/outbound', { token: owner })).body.allow_private_networks).toBe(false);
  });

  it('set by the configuration: read as such, and a change is 409 naming the variable', async () => {
    const token = (await setupOwner(pinned)).access_token;
    expect((await pinned.api.get('/api/v1/settings/outbound', { token })).body).toEqual({
      allow_private_networks: true,
      set_by: 'configuration',
    });
    const res = await pinned.api.patch('/api/v1/settings/outbound', { allow_private_networks: false }, { token });
    expect(problemOf(res)).toEqual([409, 'application/problem+json']);
    expect(res.body.detail).toContain('SVC_OUTBOUND_ALLOW_PRIVATE_NETWORKS');
  });
});

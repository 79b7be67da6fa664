// HTTP concerns of /certificates: status codes, problem documents, roles, pages and filters.
// What the use cases decide (parsing the material, the key and domain checks, revisions, what
// blocks a delete, audit details) is proven in packages/domain-tests/test/certificates.
import { withActor } from '@svc/domain';
import { adminWithRole, type Fixtures, fixtures, selfSignedCertificate, setupOwner, TEST_OWNER, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let token: string;
let ownerId: string;
let f: Fixtures;
let A: { cert_pem: string; key_pem: string };
let B: { cert_pem: string; key_pem: string };
beforeAll(async () => {
  s = await startAdminApi();
  const o = await setupOwner(s);
  token = o.access_token;
  ownerId = o.admin.id;
  f = fixtures(withActor(s.deps, TEST_OWNER));
  A = selfSignedCertificate({ dnsNames: ['example.com', 'www.example.com'] });
  B = selfSignedCertificate({ cn: 'other.example.org' });
});
afterAll(async () => {
  await s.stop();
});

const upload = (body: Record<string, unknown>, t = token) =>
  s.api.post('/api/v1/certificates', { kind: 'uploaded', ...body }, { token: t });

describe('POST /certificates and GET /certificates/{id}', () => {
  it('201 with the certificate, audited as the admin of the token; GET answers the same; the key is never in a response', async () => {
    const res = await upload({ name: 'edge', ...A });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'edge', kind: 'uploaded', domains: ['example.com', 'www.example.com'], has_key: true });
    expect(res.text).not.toContain('PRIVATE KEY');
    expect(res.body.key_pem).toBeUndefined();
    const got = await s.api.get(`/api/v1/certificates/${res.body.id}`, { token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    expect(got.text).not.toContain('PRIVATE KEY');
    const audit = await s.deps.db.selectFrom('audit_log').selectAll().where('entity_id', '=', res.body.id).execute();
    expect(audit).toMatchObject([{ action: 'certificate.created', actor_type: 'admin', actor_id: ownerId }]);
  });

  it('a bad body is a 400 validation problem per field; so is material the use case refuses', async () => {
    const missing = await upload({ cert_pem: A.cert_pem });
    expect(missing.status).toBe(400);
    expect(missing.body.type).toBe('urn:svc:problem:validation');
    expect(missing.body.errors.key_pem).toMatch(/required/);
    expect((await upload({ ...A, key: 'x' })).status).toBe(400);
    const badKind = await s.api.post('/api/v1/certificates', { kind: 'selfsigned', ...A }, { token });
    expect(badKind.status).toBe(400);
    expect(badKind.body.errors.kind).toBeDefined();
    const mismatch = await upload({ cert_pem: A.cert_pem, key_pem: B.key_pem });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.type).toBe('urn:svc:problem:validation');
    expect(mismatch.body.errors.key_pem).toBe('does not match the certificate');
  });

  it('kind acme without an account, a DNS provider or valid names is a 400 validation problem per field', async () => {
    const res = await s.api.post('/api/v1/certificates', { kind: 'acme', domains: ['a.*.example.com'] }, { token });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body.type).toBe('urn:svc:problem:validation');
    expect(res.body.errors).toMatchObject({ acme_account_id: 'required for kind acme', dns_provider_id: 'required for kind acme' });
    expect(res.body.errors['domains.0']).toMatch(/wildcard/);
  });

  it('kind acme is recorded pending, with its account and DNS provider, due now', async () => {
    const account = await f.acmeAccount();
    const provider = await f.dnsProvider();
    const res = await s.api.post(
      '/api/v1/certificates',
      { kind: 'acme', acme_account_id: account.id, dns_provider_id: provider.id, domains: ['Shop.Example.com'] },
      { token },
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      kind: 'acme',
      status: 'pending',
      domains: ['shop.example.com'],
      cert_pem: null,
      has_key: false,
      acme_account_id: account.id,
      dns_provider_id: provider.id,
      last_error: null,
      failed_attempts: 0,
    });
    expect(res.body.next_attempt_at).toBe(s.clock.now().toISOString());
  });

  it('POST /certificates/{id}/renew of an uploaded certificate is 409 (new material comes by PATCH); an unknown id is 404', async () => {
    const c = await f.certificate(A);
    const res = await s.api.post(`/api/v1/certificates/${c.id}/renew`, {}, { token });
    expect(res.status).toBe(409);
    expect(res.body.type).toBe('urn:svc:problem:conflict');
    expect((await s.api.post('/api/v1/certificates/crt_nope/renew', {}, { token })).status).toBe(404);
  });

  it('an unknown id is 404 problem+json', async () => {
    const res = await s.api.get('/api/v1/certificates/crt_nope', { token });
    expect(res.status).toBe(404);
    expect(res.body.type).toBe('urn:svc:problem:not-found');
  });
});

describe('GET /certificates', () => {
  it('a pagination walk visits every certificate once, oldest first', async () => {
    for (let i = 0; i < 7; i++) await f.certificate({ name: `walk-${i}`, ...A });
    const all = (await s.api.get('/api/v1/certificates?limit=200', { token })).body.items.map((c: { id: string }) => c.id);
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await s.api.get(`/api/v1/certificates?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token });
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(3);
      walked.push(...res.body.items.map((c: { id: string }) => c.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(walked).toEqual(all);
    expect([...walked].sort()).toEqual(walked);
    expect(walked.length).toBeGreaterThanOrEqual(7);
    expect((await s.api.get('/api/v1/certificates?cursor=garbage', { token })).status).toBe(400);
  });

  it('filters by kind and status', async () => {
    const uploaded = await s.api.get('/api/v1/certificates?kind=uploaded&limit=200', { token });
    expect(uploaded.body.items.length).toBeGreaterThan(0);
    expect(uploaded.body.items.every((c: { kind: string }) => c.kind === 'uploaded')).toBe(true);
    const acme = (await s.api.get('/api/v1/certificates?kind=acme', { token })).body.items;
    expect(acme.length).toBeGreaterThan(0);
    expect(acme.every((c: { kind: string; status: string }) => c.kind === 'acme' && c.status === 'pending')).toBe(true);
    const active = await s.api.get('/api/v1/certificates?status=active&limit=200', { token });
    expect(active.body.items.length).toBe(uploaded.body.items.length);
    expect((await s.api.get('/api/v1/certificates?status=expired', { token })).body.items).toEqual([]);
    expect((await s.api.get('/api/v1/certificates?kind=other', { token })).status).toBe(400);
  });
});

describe('PATCH /certificates/{id}', () => {
  it('200 with the merged certificate; half the material, unknown fields 400 per field; an unknown certificate 404', async () => {
    const c = await f.certificate({ name: 'old', ...A });
    const res = await s.api.patch(`/api/v1/certificates/${c.id}`, { name: 'new' }, { token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'new', domains: c.domains, not_after: c.not_after });
    const onlyCert = await s.api.patch(`/api/v1/certificates/${c.id}`, { cert_pem: B.cert_pem }, { token });
    expect(onlyCert.status).toBe(400);
    expect(onlyCert.body.errors.key_pem).toBeDefined();
    expect((await s.api.patch(`/api/v1/certificates/${c.id}`, { kind: 'acme' }, { token })).status).toBe(400);
    expect((await s.api.patch('/api/v1/certificates/crt_nope', { name: 'x' }, { token })).status).toBe(404);
  });
});

describe('DELETE /certificates/{id}', () => {
  it('409 conflict problem naming the profiles using it (blocked_by); 204 for an unused one, then 404', async () => {
    const used = await f.certificate(A);
    const profile = await f.profile({ protocol: 'trojan', stream: { network: 'tcp', security: 'tls', tls: { certificate_id: used.id } } });
    const del = await s.api.delete(`/api/v1/certificates/${used.id}`, { token });
    expect(del.status).toBe(409);
    expect(del.body.type).toBe('urn:svc:problem:conflict');
    expect(del.body.blocked_by).toEqual({ inbound_profiles: [profile.id] });
    expect(del.body.detail).toContain(profile.id);
    const c = await f.certificate(A);
    expect((await s.api.delete(`/api/v1/certificates/${c.id}`, { token })).status).toBe(204);
    expect((await s.api.get(`/api/v1/certificates/${c.id}`, { token })).status).toBe(404);
    expect((await s.api.delete(`/api/v1/certificates/${c.id}`, { token })).status).toBe(404);
  });
});

describe('roles', () => {
  it('a viewer reads but gets 403 on every write; an admin uploads', async () => {
    const viewer = await adminWithRole(s, token, 'viewer');
    const c = await f.certificate(A);
    expect((await s.api.get('/api/v1/certificates', { token: viewer.access_token })).status).toBe(200);
    expect((await s.api.get(`/api/v1/certificates/${c.id}`, { token: viewer.access_token })).status).toBe(200);
    expect((await upload(A, viewer.access_token)).status).toBe(403);
    expect((await s.api.patch(`/api/v1/certificates/${c.id}`, { name: 'x' }, { token: viewer.access_token })).status).toBe(403);
    expect((await s.api.delete(`/api/v1/certificates/${c.id}`, { token: viewer.access_token })).status).toBe(403);
    const admin = await adminWithRole(s, token, 'admin');
    expect((await upload(A, admin.access_token)).status).toBe(201);
  });
});

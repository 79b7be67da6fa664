import { newId } from '@svc/domain';
import { adminWithRole, selfSignedCertificate, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let token: string;
let ownerId: string;
let A: { cert_pem: string; key_pem: string };
let B: { cert_pem: string; key_pem: string };
beforeAll(async () => {
  s = await startAdminApi();
  const o = await setupOwner(s);
  token = o.access_token;
  ownerId = o.admin.id;
  A = selfSignedCertificate({ dnsNames: ['example.com', 'www.example.com'] });
  B = selfSignedCertificate({ cn: 'other.example.org' });
});
afterAll(async () => {
  await s.stop();
});

const upload = (body: Record<string, unknown>, t = token) =>
  s.api.post('/api/v1/certificates', { kind: 'uploaded', ...body }, { token: t });

async function insertNode(name: string): Promise<string> {
  const now = s.clock.now();
  const id = newId('nod', now.getTime());
  await s.deps.db
    .insertInto('nodes')
    .values({ id, name, address: `${name}.example.net`, created_at: now, updated_at: now })
    .execute();
  return id;
}
const revision = async (id: string) =>
  Number((await s.deps.db.selectFrom('nodes').select('desired_revision').where('id', '=', id).executeTakeFirstOrThrow()).desired_revision);

describe('certificates: upload, read, list', () => {
  it('parses validity, issuer and domains (subjectAltName DNS entries) from the PEM; the key is sealed and never returned', async () => {
    const res = await upload({ name: 'edge', ...A });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'edge',
      kind: 'uploaded',
      status: 'active',
      domains: ['example.com', 'www.example.com'],
      has_key: true,
    });
    expect(res.body.id).toMatch(/^crt_/);
    expect(res.body.issuer).toContain('CN=example.com');
    expect(res.body.cert_pem).toContain('-----BEGIN CERTIFICATE-----');
    const days = (Date.parse(res.body.not_after) - Date.parse(res.body.not_before)) / 86_400_000;
    expect(Math.round(days)).toBe(30);
    expect(res.body.not_after).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(res.text).not.toContain('PRIVATE KEY');
    expect(res.body.key_pem).toBeUndefined();

    const row = await s.deps.db.selectFrom('certificates').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row.key_pem_enc).not.toContain('PRIVATE KEY');
    expect(s.deps.secrets.open(row.key_pem_enc as string)).toContain('PRIVATE KEY');

    const got = await s.api.get(`/api/v1/certificates/${res.body.id}`, { token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    expect(got.text).not.toContain('PRIVATE KEY');
  });

  it('takes the first certificate of a chain as the leaf', async () => {
    const res = await upload({ cert_pem: `${A.cert_pem}${B.cert_pem}`, key_pem: A.key_pem });
    expect(res.status).toBe(201);
    expect(res.body.domains).toEqual(['example.com', 'www.example.com']);
    expect(res.body.cert_pem.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
    // The key of the second certificate does not match the leaf.
    const wrong = await upload({ cert_pem: `${A.cert_pem}${B.cert_pem}`, key_pem: B.key_pem });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors.key_pem).toMatch(/does not match/);
  });

  it('domains given must be covered by the certificate', async () => {
    const ok = await upload({ ...A, domains: ['WWW.example.com'] });
    expect(ok.status).toBe(201);
    expect(ok.body.domains).toEqual(['www.example.com']);
    const bad = await upload({ ...A, domains: ['example.com', 'evil.example.net'] });
    expect(bad.status).toBe(400);
    expect(bad.body.errors['domains.1']).toMatch(/does not cover/);
  });

  it('validation errors per field: key mismatch, unparsable certificate, unparsable key, missing material, unknown fields', async () => {
    const mismatch = await upload({ cert_pem: A.cert_pem, key_pem: B.key_pem });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.type).toBe('urn:svc:problem:validation');
    expect(mismatch.body.errors.key_pem).toBe('does not match the certificate');

    const garbage = await upload({ cert_pem: 'not a certificate', key_pem: A.key_pem });
    expect(garbage.status).toBe(400);
    expect(garbage.body.errors.cert_pem).toBeDefined();

    const broken = await upload({ cert_pem: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', key_pem: A.key_pem });
    expect(broken.status).toBe(400);
    expect(broken.body.errors.cert_pem).toMatch(/does not parse/);

    const badKey = await upload({ cert_pem: A.cert_pem, key_pem: 'nope' });
    expect(badKey.status).toBe(400);
    expect(badKey.body.errors.key_pem).toBeDefined();

    const missing = await upload({ cert_pem: A.cert_pem });
    expect(missing.status).toBe(400);
    expect(missing.body.errors.key_pem).toMatch(/required/);

    const unknown = await upload({ ...A, key: 'x' });
    expect(unknown.status).toBe(400);

    const badKind = await s.api.post('/api/v1/certificates', { kind: 'selfsigned', ...A }, { token });
    expect(badKind.status).toBe(400);
    expect(badKind.body.errors.kind).toBeDefined();
  });

  it('kind acme is refused as a validation problem: ACME issuance is not available in this version', async () => {
    const before = await s.deps.db.selectFrom('certificates').select('id').execute();
    const res = await s.api.post('/api/v1/certificates', { kind: 'acme', domains: ['example.com'] }, { token });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body.type).toBe('urn:svc:problem:validation');
    expect(res.body.errors.kind).toBe('ACME issuance is not available in this version');
    expect(await s.deps.db.selectFrom('certificates').select('id').execute()).toHaveLength(before.length);
  });

  it('there is no renew route yet', async () => {
    const c = await upload(A);
    expect((await s.api.post(`/api/v1/certificates/${c.body.id}/renew`, {}, { token })).status).toBe(404);
  });

  it('a pagination walk visits every certificate once, oldest first', async () => {
    for (let i = 0; i < 7; i++) expect((await upload({ name: `walk-${i}`, ...A })).status).toBe(201);
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
    expect((await s.api.get('/api/v1/certificates?kind=acme', { token })).body.items).toEqual([]);
    const active = await s.api.get('/api/v1/certificates?status=active&limit=200', { token });
    expect(active.body.items.length).toBe(uploaded.body.items.length);
    expect((await s.api.get('/api/v1/certificates?status=expired', { token })).body.items).toEqual([]);
    expect((await s.api.get('/api/v1/certificates?kind=other', { token })).status).toBe(400);
  });

  it('an unknown id is 404 problem+json', async () => {
    const res = await s.api.get('/api/v1/certificates/crt_nope', { token });
    expect(res.status).toBe(404);
    expect(res.body.type).toBe('urn:svc:problem:not-found');
  });
});

describe('certificates: update and delete', () => {
  it('PATCH merges: a name alone changes only the name and moves no revision', async () => {
    const c = await upload({ name: 'old', ...A });
    const res = await s.api.patch(`/api/v1/certificates/${c.body.id}`, { name: 'new' }, { token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'new', domains: c.body.domains, cert_pem: c.body.cert_pem, not_after: c.body.not_after });
  });

  it('PATCH cert_pem without key_pem (and the reverse) is 400 naming the missing half', async () => {
    const c = await upload(A);
    const onlyCert = await s.api.patch(`/api/v1/certificates/${c.body.id}`, { cert_pem: B.cert_pem }, { token });
    expect(onlyCert.status).toBe(400);
    expect(onlyCert.body.errors.key_pem).toBeDefined();
    const onlyKey = await s.api.patch(`/api/v1/certificates/${c.body.id}`, { key_pem: B.key_pem }, { token });
    expect(onlyKey.status).toBe(400);
    expect(onlyKey.body.errors.cert_pem).toBeDefined();
    const mismatch = await s.api.patch(`/api/v1/certificates/${c.body.id}`, { cert_pem: B.cert_pem, key_pem: A.key_pem }, { token });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.errors.key_pem).toBeDefined();
    expect((await s.api.patch(`/api/v1/certificates/${c.body.id}`, { kind: 'acme' }, { token })).status).toBe(400);
    expect((await s.api.patch('/api/v1/certificates/crt_nope', { name: 'x' }, { token })).status).toBe(404);
  });

  it('PATCH domains alone is checked against the stored certificate', async () => {
    const c = await upload(A);
    const ok = await s.api.patch(`/api/v1/certificates/${c.body.id}`, { domains: ['example.com'] }, { token });
    expect(ok.status).toBe(200);
    expect(ok.body.domains).toEqual(['example.com']);
    const bad = await s.api.patch(`/api/v1/certificates/${c.body.id}`, { domains: ['other.example.org'] }, { token });
    expect(bad.status).toBe(400);
    expect(bad.body.errors['domains.0']).toBeDefined();
  });

  it('new material replaces the old one and moves the revision of every node serving it, and of no other node', async () => {
    const c = await upload(A);
    const other = await upload(A);
    const profile = await s.api.post(
      '/api/v1/inbound-profiles',
      { name: 'tls-crt-test', protocol: 'trojan', stream: { network: 'tcp', security: 'tls', tls: { certificate_id: c.body.id } } },
      { token },
    );
    expect(profile.status).toBe(201);
    const otherProfile = await s.api.post(
      '/api/v1/inbound-profiles',
      { name: 'tls-crt-other', protocol: 'trojan', stream: { network: 'tcp', security: 'tls', tls: { certificate_id: other.body.id } } },
      { token },
    );
    const [n1, n2, n3] = [await insertNode('crt-n1'), await insertNode('crt-n2'), await insertNode('crt-n3')];
    for (const [node, p, port] of [
      [n1, profile.body.id, 443],
      [n2, profile.body.id, 443],
      [n3, otherProfile.body.id, 443],
    ] as const) {
      expect((await s.api.post('/api/v1/inbounds', { node_id: node, profile_id: p, port }, { token })).status).toBe(201);
    }
    const before = [await revision(n1), await revision(n2), await revision(n3)];
    const res = await s.api.patch(`/api/v1/certificates/${c.body.id}`, B, { token });
    expect(res.status).toBe(200);
    expect(res.body.domains).toEqual(['other.example.org']);
    expect(res.body.issuer).toContain('CN=other.example.org');
    expect(res.body.cert_pem).toBe(B.cert_pem.trim().concat('\n'));
    expect([await revision(n1), await revision(n2), await revision(n3)]).toEqual([before[0]! + 1, before[1]! + 1, before[2]]);
    const row = await s.deps.db.selectFrom('certificates').select('key_pem_enc').where('id', '=', c.body.id).executeTakeFirstOrThrow();
    const stored = s.deps.secrets.open(row.key_pem_enc as string);
    expect(stored).toContain('PRIVATE KEY');

    // Renaming moves nothing.
    await s.api.patch(`/api/v1/certificates/${c.body.id}`, { name: 'renamed' }, { token });
    expect(await revision(n1)).toBe(before[0]! + 1);

    // Still used: 409 naming the profile.
    const del = await s.api.delete(`/api/v1/certificates/${c.body.id}`, { token });
    expect(del.status).toBe(409);
    expect(del.body.type).toBe('urn:svc:problem:conflict');
    expect(del.body.blocked_by).toEqual({ inbound_profiles: [profile.body.id] });
    expect(del.body.detail).toContain(profile.body.id);
  });

  it('DELETE removes an unused certificate (204, then 404) and is audited', async () => {
    const c = await upload({ name: 'doomed', ...A });
    expect((await s.api.delete(`/api/v1/certificates/${c.body.id}`, { token })).status).toBe(204);
    expect((await s.api.get(`/api/v1/certificates/${c.body.id}`, { token })).status).toBe(404);
    expect((await s.api.delete(`/api/v1/certificates/${c.body.id}`, { token })).status).toBe(404);
  });
});

describe('certificates: roles and audit', () => {
  it('a viewer reads but gets 403 on every write', async () => {
    const viewer = await adminWithRole(s, token, 'viewer');
    const c = await upload(A);
    expect((await s.api.get('/api/v1/certificates', { token: viewer.access_token })).status).toBe(200);
    expect((await s.api.get(`/api/v1/certificates/${c.body.id}`, { token: viewer.access_token })).status).toBe(200);
    expect((await upload(A, viewer.access_token)).status).toBe(403);
    expect((await s.api.patch(`/api/v1/certificates/${c.body.id}`, { name: 'x' }, { token: viewer.access_token })).status).toBe(403);
    expect((await s.api.delete(`/api/v1/certificates/${c.body.id}`, { token: viewer.access_token })).status).toBe(403);
    const admin = await adminWithRole(s, token, 'admin');
    expect((await upload(A, admin.access_token)).status).toBe(201);
  });

  it('create, update and delete each write an audit row with the acting admin, without key material', async () => {
    const c = await upload({ name: 'audited', ...A });
    await s.api.patch(`/api/v1/certificates/${c.body.id}`, { ...B, name: 'audited-2' }, { token });
    await s.api.delete(`/api/v1/certificates/${c.body.id}`, { token });
    const rows = await s.deps.db.selectFrom('audit_log').selectAll().where('entity_id', '=', c.body.id).orderBy('id').execute();
    expect(rows.map((r) => r.action)).toEqual(['certificate.created', 'certificate.updated', 'certificate.deleted']);
    for (const r of rows) {
      expect(r).toMatchObject({ actor_type: 'admin', actor_id: ownerId, entity_type: 'certificate' });
      expect(JSON.stringify(r.details)).not.toContain('PRIVATE KEY');
    }
    expect(rows[1]?.details).toMatchObject({ material_replaced: true });
  });
});

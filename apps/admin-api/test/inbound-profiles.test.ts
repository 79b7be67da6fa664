// HTTP concerns of /inbound-profiles: status codes, problem documents, roles, pages and
// filters, the OpenAPI document. The stream and profile rules, REALITY keys, revisions and
// audit details are proven in packages/domain-tests/test/inbound-profiles.
import SwaggerParser from '@apidevtools/swagger-parser';
import { withActor } from '@svc/domain';
import { adminWithRole, type Fixtures, fixtures, setupOwner, TEST_OWNER, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let token: string;
let ownerId: string;
let certId: string;
let f: Fixtures;

beforeAll(async () => {
  s = await startAdminApi();
  const o = await setupOwner(s);
  token = o.access_token;
  ownerId = o.admin.id;
  f = fixtures(withActor(s.deps, TEST_OWNER));
  certId = (await f.certificate()).id;
});
afterAll(async () => {
  await s.stop();
});

let seq = 0;
const uniq = (p: string) => `${p}-${++seq}`;
const create = (body: Record<string, unknown>, t = token) =>
  s.api.post('/api/v1/inbound-profiles', { name: uniq('p'), ...body }, { token: t });
const patch = (id: string, body: Record<string, unknown>) => s.api.patch(`/api/v1/inbound-profiles/${id}`, body, { token });
const TCP = { network: 'tcp', security: 'none' };

describe('POST /inbound-profiles and GET /inbound-profiles/{id}', () => {
  it('201 with the profile, audited as the admin of the token; GET answers the same; the REALITY private key is never in a response', async () => {
    const res = await create({
      protocol: 'vless',
      vless_flow: 'xtls-rprx-vision',
      stream: { network: 'tcp', security: 'reality', reality: { dest: 'www.example.com:443', server_names: ['www.example.com'] } },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.id).toMatch(/^ipr_/);
    expect(res.body.stream.reality).toMatchObject({ has_private_key: true, fingerprint: 'chrome' });
    const row = await s.deps.db
      .selectFrom('inbound_profiles')
      .select('reality_private_key_enc')
      .where('id', '=', res.body.id)
      .executeTakeFirstOrThrow();
    const priv = s.deps.secrets.open(row.reality_private_key_enc as string);
    expect(res.text).not.toContain(priv);
    const got = await s.api.get(`/api/v1/inbound-profiles/${res.body.id}`, { token });
    expect(got.body).toEqual(res.body);
    expect(got.text).not.toContain(priv);
    const audit = await s.deps.db.selectFrom('audit_log').selectAll().where('entity_id', '=', res.body.id).execute();
    expect(audit).toMatchObject([{ action: 'inbound_profile.created', actor_type: 'admin', actor_id: ownerId }]);
  });

  it('a bad body is a 400 validation problem with an error per field, nested fields by their dot path', async () => {
    const missing = await s.api.post('/api/v1/inbound-profiles', {}, { token });
    expect(missing.status).toBe(400);
    expect(missing.body.type).toBe('urn:svc:problem:validation');
    expect(Object.keys(missing.body.errors)).toEqual(expect.arrayContaining(['name', 'protocol', 'stream']));
    expect((await create({ protocol: 'vmess', stream: TCP, port: 443 })).status).toBe(400);
    const nested = await create({
      protocol: 'vmess',
      stream: { network: 'ws', security: 'none', ws: { path: 'nope' }, tls: { certificate_id: certId } },
      sniffing: { dest_override: ['fakedns'] },
    });
    expect(nested.status).toBe(400);
    expect(nested.body.errors).toMatchObject({
      'stream.ws.path': 'must start with /',
      'stream.tls': 'only allowed when stream.security is tls',
      'sniffing.dest_override.0': expect.any(String),
    });
  });

  it('a rule of the whole profile is a 400 problem naming the field; a taken name a 409 conflict problem', async () => {
    const missing = await create({ protocol: 'trojan', stream: { network: 'tcp', security: 'tls', tls: { certificate_id: 'crt_nope' } } });
    expect(missing.status).toBe(400);
    expect(missing.body.type).toBe('urn:svc:problem:validation');
    expect(missing.body.errors['stream.tls.certificate_id']).toBe('no such certificate');
    expect((await create({ name: 'same-name', protocol: 'vmess', stream: TCP })).status).toBe(201);
    const dup = await create({ name: 'same-name', protocol: 'trojan', stream: TCP });
    expect(dup.status).toBe(409);
    expect(dup.body.type).toBe('urn:svc:problem:conflict');
    expect(dup.body.errors.name).toBe('already taken');
  });
});

describe('GET /inbound-profiles', () => {
  it('a pagination walk visits every profile once, oldest first', async () => {
    for (let i = 0; i < 5; i++) await f.profile({ protocol: 'trojan' });
    const all = (await s.api.get('/api/v1/inbound-profiles?limit=200', { token })).body.items.map((p: { id: string }) => p.id);
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await s.api.get(`/api/v1/inbound-profiles?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
        token,
      });
      expect(res.status).toBe(200);
      walked.push(...res.body.items.map((p: { id: string }) => p.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(walked).toEqual(all);
    expect([...walked].sort()).toEqual(walked);
    expect(walked.length).toBeGreaterThanOrEqual(5);
  });

  it('filters by protocol and by certificate_id', async () => {
    await f.profile({ protocol: 'trojan', stream: { network: 'tcp', security: 'tls', tls: { certificate_id: certId } } });
    const trojan = await s.api.get('/api/v1/inbound-profiles?protocol=trojan&limit=200', { token });
    expect(trojan.body.items.length).toBeGreaterThanOrEqual(5);
    expect(trojan.body.items.every((p: { protocol: string }) => p.protocol === 'trojan')).toBe(true);
    const byCert = await s.api.get(`/api/v1/inbound-profiles?certificate_id=${certId}&limit=200`, { token });
    expect(byCert.body.items.length).toBeGreaterThan(0);
    expect(byCert.body.items.every((p: any) => p.stream.tls?.certificate_id === certId)).toBe(true);
    expect((await s.api.get('/api/v1/inbound-profiles?protocol=http', { token })).status).toBe(400);
  });
});

describe('PATCH /inbound-profiles/{id}', () => {
  it('200 with the merged profile; unknown fields 400; a merged result breaking a rule 400; an unknown profile 404', async () => {
    const p = await f.profile({ protocol: 'vmess', stream: { network: 'ws', security: 'none' } });
    const res = await patch(p.id, {
      stream: { network: 'grpc', security: 'none', grpc: { service_name: 'svc' } },
      sniffing: { route_only: true },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ name: p.name, protocol: 'vmess', stream: { network: 'grpc' }, sniffing: { route_only: true } });
    expect((await s.api.get(`/api/v1/inbound-profiles/${p.id}`, { token })).body).toEqual(res.body);
    expect((await patch(p.id, { colour: 'red' })).status).toBe(400);
    const bad = await patch(p.id, { vless_flow: 'xtls-rprx-vision' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.vless_flow).toBeDefined();
    expect((await patch('ipr_nope', { name: 'x' })).status).toBe(404);
  });
});

describe('DELETE /inbound-profiles/{id}', () => {
  it('409 conflict problem naming the bound inbounds (blocked_by); 204 once unbound; then 404', async () => {
    const inbound = await f.inbound();
    const del = await s.api.delete(`/api/v1/inbound-profiles/${inbound.profile_id}`, { token });
    expect(del.status).toBe(409);
    expect(del.body.type).toBe('urn:svc:problem:conflict');
    expect(del.body.blocked_by).toEqual({ inbounds: [inbound.id] });
    expect(del.body.detail).toContain('inbounds');
    expect((await s.api.delete(`/api/v1/inbounds/${inbound.id}`, { token })).status).toBe(204);
    expect((await s.api.delete(`/api/v1/inbound-profiles/${inbound.profile_id}`, { token })).status).toBe(204);
    expect((await s.api.get(`/api/v1/inbound-profiles/${inbound.profile_id}`, { token })).status).toBe(404);
  });
});

describe('roles', () => {
  it('a viewer reads but gets 403 on every write', async () => {
    const viewer = await adminWithRole(s, token, 'viewer');
    const p = await f.profile();
    const t = viewer.access_token;
    expect((await s.api.get('/api/v1/inbound-profiles', { token: t })).status).toBe(200);
    expect((await s.api.get(`/api/v1/inbound-profiles/${p.id}`, { token: t })).status).toBe(200);
    expect((await create({ protocol: 'vmess', stream: TCP }, t)).status).toBe(403);
    expect((await s.api.patch(`/api/v1/inbound-profiles/${p.id}`, { name: 'x' }, { token: t })).status).toBe(403);
    expect((await s.api.delete(`/api/v1/inbound-profiles/${p.id}`, { token: t })).status).toBe(403);
  });
});

describe('OpenAPI document: inbound profiles, inbounds, access groups, certificates', () => {
  it('validates with a real validator and declares each route with its schemas, roles and problem responses', async () => {
    const doc = (await s.api.get('/api/v1/openapi.json')).body;
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
    for (const base of ['inbound-profiles', 'inbounds', 'access-groups', 'certificates']) {
      const list = doc.paths[`/api/v1/${base}`];
      const one = doc.paths[`/api/v1/${base}/{id}`];
      expect(Object.keys(list).sort(), base).toEqual(['get', 'post']);
      expect(Object.keys(one).sort(), base).toEqual(['delete', 'get', 'patch']);
      expect(list.post.requestBody.content['application/json'].schema).toBeDefined();
      expect(one.patch.requestBody.content['application/json'].schema).toBeDefined();
      expect(list.get['x-roles']).toEqual(['owner', 'admin', 'viewer']);
      for (const op of [list.post, one.patch, one.delete]) expect(op['x-roles']).toEqual(['owner', 'admin']);
      for (const op of [one.get, one.patch, one.delete]) expect(op.responses['404'].content['application/problem+json']).toBeDefined();
      expect(one.delete.responses['409'].content['application/problem+json']).toBeDefined();
    }
    const renew = doc.paths['/api/v1/certificates/{id}/renew'];
    expect(Object.keys(renew)).toEqual(['post']);
    expect(renew.post['x-roles']).toEqual(['owner', 'admin']);
    expect(renew.post.responses['202'].content['application/json'].schema).toBeDefined();
    expect(renew.post.responses['409'].content['application/problem+json']).toBeDefined();
    // The domain's nested input schemas keep their component names, in create and update alike.
    const update = doc.components.schemas.UpdateInboundProfile.properties;
    expect(JSON.stringify(update.stream)).toContain('#/components/schemas/StreamSettingsInput');
    expect(JSON.stringify(update.sniffing)).toContain('#/components/schemas/SniffingInput');
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['TcpSettings', 'WsSettings', 'GrpcSettings', 'TlsSettings', 'RealitySettingsInput', 'StreamSettingsInput']),
    );
  });
});

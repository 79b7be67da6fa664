import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import SwaggerParser from '@apidevtools/swagger-parser';
import { newId } from '@svc/domain';
import { adminWithRole, selfSignedCertificate, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let token: string;
let ownerId: string;
let certId: string;

beforeAll(async () => {
  s = await startAdminApi();
  const o = await setupOwner(s);
  token = o.access_token;
  ownerId = o.admin.id;
  const cert = await s.api.post('/api/v1/certificates', { kind: 'uploaded', ...selfSignedCertificate() }, { token });
  certId = cert.body.id;
});
afterAll(async () => {
  await s.stop();
});

let seq = 0;
const uniq = (p: string) => `${p}-${++seq}`;
const create = (body: Record<string, unknown>, t = token) =>
  s.api.post('/api/v1/inbound-profiles', { name: uniq('p'), ...body }, { token: t });
const patch = (id: string, body: Record<string, unknown>) => s.api.patch(`/api/v1/inbound-profiles/${id}`, body, { token });
const REALITY = { dest: 'www.example.com:443', server_names: ['www.example.com'] };
const vlessReality = (extra: Record<string, unknown> = {}) => ({
  protocol: 'vless',
  vless_flow: 'xtls-rprx-vision',
  stream: { network: 'tcp', security: 'reality', reality: { ...REALITY, ...extra } },
});

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
const bind = async (node: string, profile: string, port: number) => {
  const res = await s.api.post('/api/v1/inbounds', { node_id: node, profile_id: profile, port }, { token });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; tag: string };
};

const PKCS8_X25519 = Buffer.from('302e020100300506032b656e04220420', 'hex');
const publicOf = (priv: string) =>
  createPublicKey(
    createPrivateKey({ key: Buffer.concat([PKCS8_X25519, Buffer.from(priv, 'base64url')]), format: 'der', type: 'pkcs8' }),
  ).export({
    format: 'jwk',
  }).x as string;
const storedKey = async (id: string) => {
  const row = await s.deps.db
    .selectFrom('inbound_profiles')
    .select('reality_private_key_enc')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return row.reality_private_key_enc === null ? null : s.deps.secrets.open(row.reality_private_key_enc);
};

describe('inbound profiles: creation and the stream rules', () => {
  it('REALITY without a private key: an X25519 pair is generated, the private key sealed and never returned', async () => {
    const res = await create(vlessReality());
    expect(res.status, res.text).toBe(201);
    expect(res.body.id).toMatch(/^ipr_/);
    const r = res.body.stream.reality;
    expect(r).toMatchObject({
      dest: 'www.example.com:443',
      server_names: ['www.example.com'],
      fingerprint: 'chrome',
      has_private_key: true,
    });
    expect(r.public_key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(r.private_key).toBeUndefined();
    expect(r.short_ids).toHaveLength(1);
    expect(r.short_ids[0]).toMatch(/^[0-9a-f]{8}$/);
    const priv = await storedKey(res.body.id);
    expect(priv).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(publicOf(priv as string)).toBe(r.public_key);
    const row = await s.deps.db.selectFrom('inbound_profiles').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row.stream)).not.toContain(priv);
    expect(row.reality_private_key_enc).not.toContain(priv);
    const got = await s.api.get(`/api/v1/inbound-profiles/${res.body.id}`, { token });
    expect(got.body).toEqual(res.body);
    expect(got.text).not.toContain(priv);
    expect(res.body).toMatchObject({
      protocol: 'vless',
      vless_flow: 'xtls-rprx-vision',
      shadowsocks_method: null,
      block_bittorrent: false,
      sniffing: { enabled: true, dest_override: ['http', 'tls', 'quic'], route_only: false },
    });
    expect(res.body.stream.tcp).toEqual({ accept_proxy_protocol: false });
  });

  it('REALITY with a private key: validated, the public key derived, the key never echoed', async () => {
    const jwk = generateKeyPairSync('x25519').privateKey.export({ format: 'jwk' });
    const res = await create(vlessReality({ private_key: jwk.d, short_ids: ['ab', '', '0123456789abcdef'] }));
    expect(res.status, res.text).toBe(201);
    expect(res.body.stream.reality.public_key).toBe(jwk.x);
    expect(res.body.stream.reality.short_ids).toEqual(['ab', '', '0123456789abcdef']);
    expect(res.text).not.toContain(jwk.d as string);
    expect(await storedKey(res.body.id)).toBe(jwk.d);

    const matching = await create(vlessReality({ private_key: jwk.d, public_key: jwk.x }));
    expect(matching.status).toBe(201);
    const wrongPublic = await create(
      vlessReality({ private_key: jwk.d, public_key: generateKeyPairSync('x25519').publicKey.export({ format: 'jwk' }).x }),
    );
    expect(wrongPublic.status).toBe(400);
    expect(wrongPublic.body.errors['stream.reality.public_key']).toBeDefined();
    const bad = await create(vlessReality({ private_key: 'not-a-key' }));
    expect(bad.status).toBe(400);
    expect(bad.body.errors['stream.reality.private_key']).toBeDefined();
    const badShort = await create(vlessReality({ short_ids: ['xyz'] }));
    expect(badShort.status).toBe(400);
    expect(badShort.body.errors['stream.reality.short_ids.0']).toBeDefined();
  });

  it('REALITY needs dest and a server name, and works only with tcp, grpc or xhttp', async () => {
    const noDest = await create({
      protocol: 'vless',
      stream: { network: 'tcp', security: 'reality', reality: { server_names: ['a.example'] } },
    });
    expect(noDest.status).toBe(400);
    expect(noDest.body.errors['stream.reality.dest']).toBeDefined();
    const badDest = await create({
      protocol: 'vless',
      stream: { network: 'tcp', security: 'reality', reality: { ...REALITY, dest: 'no port' } },
    });
    expect(badDest.body.errors['stream.reality.dest']).toBeDefined();
    const noNames = await create({
      protocol: 'vless',
      stream: { network: 'tcp', security: 'reality', reality: { ...REALITY, server_names: [] } },
    });
    expect(noNames.body.errors['stream.reality.server_names']).toBeDefined();
    for (const network of ['ws', 'httpupgrade']) {
      const res = await create({ protocol: 'vless', stream: { network, security: 'reality', reality: REALITY } });
      expect(res.status).toBe(400);
      expect(res.body.errors['stream.security']).toMatch(/tcp, grpc, xhttp/);
    }
    const grpc = await create({
      protocol: 'vless',
      stream: { network: 'grpc', security: 'reality', grpc: { service_name: 'tun' }, reality: REALITY },
    });
    expect(grpc.status, grpc.text).toBe(201);
    const xhttp = await create({ protocol: 'vless', stream: { network: 'xhttp', security: 'reality', reality: REALITY } });
    expect(xhttp.status).toBe(201);
    expect(xhttp.body.stream.xhttp).toEqual({ path: '/', host: '', mode: 'auto' });
  });

  it('only the settings object of the chosen network and security may be present (400 per field)', async () => {
    const res = await create({
      protocol: 'vmess',
      stream: { network: 'tcp', security: 'none', ws: { path: '/x' }, grpc: { service_name: 'a' }, tls: { certificate_id: certId } },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toMatchObject({
      'stream.ws': 'only allowed when stream.network is ws',
      'stream.grpc': 'only allowed when stream.network is grpc',
      'stream.tls': 'only allowed when stream.security is tls',
    });
    const realityOnTls = await create({
      protocol: 'vless',
      stream: { network: 'tcp', security: 'tls', tls: { certificate_id: certId }, reality: REALITY },
    });
    expect(realityOnTls.body.errors['stream.reality']).toBe('only allowed when stream.security is reality');
    const tlsMissing = await create({ protocol: 'trojan', stream: { network: 'tcp', security: 'tls' } });
    expect(tlsMissing.body.errors['stream.tls']).toMatch(/required/);
    const realityMissing = await create({ protocol: 'vless', stream: { network: 'tcp', security: 'reality' } });
    expect(realityMissing.body.errors['stream.reality']).toMatch(/required/);
    const grpcMissing = await create({ protocol: 'vmess', stream: { network: 'grpc', security: 'none' } });
    expect(grpcMissing.body.errors['stream.grpc']).toMatch(/required/);
  });

  it('fills the defaults of the chosen transport and keeps what is given', async () => {
    const ws = await create({ protocol: 'vmess', stream: { network: 'ws', security: 'none' } });
    expect(ws.status).toBe(201);
    expect(ws.body.stream).toEqual({ network: 'ws', security: 'none', ws: { path: '/', headers: {} } });
    const ws2 = await create({
      protocol: 'vmess',
      stream: { network: 'ws', security: 'none', ws: { path: '/v', headers: { 'X-A': 'b' } } },
    });
    expect(ws2.body.stream.ws).toEqual({ path: '/v', headers: { 'X-A': 'b' } });
    const hu = await create({
      protocol: 'trojan',
      stream: { network: 'httpupgrade', security: 'none', httpupgrade: { path: '/u', host: 'cdn.example.com' } },
    });
    expect(hu.body.stream.httpupgrade).toEqual({ path: '/u', host: 'cdn.example.com' });
    const badPath = await create({ protocol: 'vmess', stream: { network: 'ws', security: 'none', ws: { path: 'nope' } } });
    expect(badPath.status).toBe(400);
    expect(badPath.body.errors['stream.ws.path']).toBeDefined();
    const badMode = await create({ protocol: 'vless', stream: { network: 'xhttp', security: 'none', xhttp: { mode: 'sideways' } } });
    expect(badMode.status).toBe(400);
    expect(badMode.body.errors['stream.xhttp.mode']).toBeDefined();
    const unknownNested = await create({ protocol: 'vmess', stream: { network: 'tcp', security: 'none', tcp: { header: 'http' } } });
    expect(unknownNested.status).toBe(400);
    const badNetwork = await create({ protocol: 'vmess', stream: { network: 'kcp', security: 'none' } });
    expect(badNetwork.body.errors['stream.network']).toBeDefined();
  });

  it('TLS: the certificate must exist; it is stored as the profile certificate reference', async () => {
    const res = await create({
      protocol: 'trojan',
      stream: { network: 'ws', security: 'tls', tls: { certificate_id: certId, server_names: ['example.com'], alpn: 'http/1.1' } },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.stream.tls).toEqual({ server_names: ['example.com'], alpn: 'http/1.1', min_version: '1.2', certificate_id: certId });
    const row = await s.deps.db
      .selectFrom('inbound_profiles')
      .select('certificate_id')
      .where('id', '=', res.body.id)
      .executeTakeFirstOrThrow();
    expect(row.certificate_id).toBe(certId);
    const missing = await create({ protocol: 'trojan', stream: { network: 'tcp', security: 'tls', tls: { certificate_id: 'crt_nope' } } });
    expect(missing.status).toBe(400);
    expect(missing.body.errors['stream.tls.certificate_id']).toBe('no such certificate');
    const badAlpn = await create({
      protocol: 'trojan',
      stream: { network: 'tcp', security: 'tls', tls: { certificate_id: certId, alpn: 'spdy' } },
    });
    expect(badAlpn.body.errors['stream.tls.alpn']).toBeDefined();
  });

  it('vless_flow: only xtls-rprx-vision, only for vless over tcp with tls or reality', async () => {
    const vmess = await create({ ...vlessReality(), protocol: 'vmess' });
    expect(vmess.status).toBe(400);
    expect(vmess.body.errors.vless_flow).toMatch(/only for protocol vless/);
    const overWs = await create({
      protocol: 'vless',
      vless_flow: 'xtls-rprx-vision',
      stream: { network: 'ws', security: 'tls', tls: { certificate_id: certId } },
    });
    expect(overWs.body.errors.vless_flow).toMatch(/tcp/);
    const plain = await create({ protocol: 'vless', vless_flow: 'xtls-rprx-vision', stream: { network: 'tcp', security: 'none' } });
    expect(plain.body.errors.vless_flow).toBeDefined();
    const other = await create({ protocol: 'vless', vless_flow: 'xtls-rprx-direct', stream: { network: 'tcp', security: 'none' } });
    expect(other.status).toBe(400);
    expect(other.body.errors.vless_flow).toBeDefined();
    const tls = await create({
      protocol: 'vless',
      vless_flow: 'xtls-rprx-vision',
      stream: { network: 'tcp', security: 'tls', tls: { certificate_id: certId } },
    });
    expect(tls.status).toBe(201);
  });

  it('shadowsocks requires a method from the Xray list; other protocols refuse one', async () => {
    const none = await create({ protocol: 'shadowsocks', stream: { network: 'tcp', security: 'none' } });
    expect(none.status).toBe(400);
    expect(none.body.errors.shadowsocks_method).toMatch(/required/);
    const bad = await create({ protocol: 'shadowsocks', shadowsocks_method: 'rc4-md5', stream: { network: 'tcp', security: 'none' } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.shadowsocks_method).toBeDefined();
    const ok = await create({
      protocol: 'shadowsocks',
      shadowsocks_method: '2022-blake3-aes-128-gcm',
      stream: { network: 'tcp', security: 'none' },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.shadowsocks_method).toBe('2022-blake3-aes-128-gcm');
    const onVless = await create({ protocol: 'vless', shadowsocks_method: 'aes-128-gcm', stream: { network: 'tcp', security: 'none' } });
    expect(onVless.body.errors.shadowsocks_method).toMatch(/only for protocol shadowsocks/);
    // Xray serves several users with chacha20 2022 only one at a time: refused.
    const chacha = await create({
      protocol: 'shadowsocks',
      shadowsocks_method: '2022-blake3-chacha20-poly1305',
      stream: { network: 'tcp', security: 'none' },
    });
    expect(chacha.status).toBe(400);
    expect(chacha.body.errors.shadowsocks_method).toBeDefined();
  });

  it('a Shadowsocks 2022 profile gets a server key of its method size; a new method a new key; classic methods none', async () => {
    const keyOf = async (id: string) =>
      (await s.deps.db.selectFrom('inbound_profiles').select('shadowsocks_server_key').where('id', '=', id).executeTakeFirstOrThrow())
        .shadowsocks_server_key;
    const p = await create({
      protocol: 'shadowsocks',
      shadowsocks_method: '2022-blake3-aes-128-gcm',
      stream: { network: 'tcp', security: 'none' },
    });
    const k128 = await keyOf(p.body.id);
    expect(Buffer.from(k128 ?? '', 'base64')).toHaveLength(16);
    expect(JSON.stringify(p.body)).not.toContain(k128);
    await s.api.patch(`/api/v1/inbound-profiles/${p.body.id}`, { sniffing: { enabled: false } }, { token });
    expect(await keyOf(p.body.id)).toBe(k128);
    await s.api.patch(`/api/v1/inbound-profiles/${p.body.id}`, { shadowsocks_method: '2022-blake3-aes-256-gcm' }, { token });
    expect(Buffer.from((await keyOf(p.body.id)) ?? '', 'base64')).toHaveLength(32);
    await s.api.patch(`/api/v1/inbound-profiles/${p.body.id}`, { shadowsocks_method: 'aes-256-gcm' }, { token });
    expect(await keyOf(p.body.id)).toBeNull();
  });

  it('sniffing and block_bittorrent: defaults, given values, and bittorrent blocking needs sniffing', async () => {
    const res = await create({
      protocol: 'vmess',
      stream: { network: 'tcp', security: 'none' },
      sniffing: { enabled: true, dest_override: ['tls', 'bittorrent', 'tls'], route_only: true },
      block_bittorrent: true,
    });
    expect(res.status).toBe(201);
    expect(res.body.sniffing).toEqual({ enabled: true, dest_override: ['tls', 'bittorrent'], route_only: true });
    expect(res.body.block_bittorrent).toBe(true);
    const off = await create({
      protocol: 'vmess',
      stream: { network: 'tcp', security: 'none' },
      sniffing: { enabled: false },
      block_bittorrent: true,
    });
    expect(off.status).toBe(400);
    expect(off.body.errors.block_bittorrent).toBeDefined();
    const badDest = await create({
      protocol: 'vmess',
      stream: { network: 'tcp', security: 'none' },
      sniffing: { dest_override: ['fakedns'] },
    });
    expect(badDest.status).toBe(400);
    expect(badDest.body.errors['sniffing.dest_override.0']).toBeDefined();
  });

  it('names are unique (409 errors.name); missing and unknown fields are 400 per field', async () => {
    const first = await create({ name: 'same-name', protocol: 'vmess', stream: { network: 'tcp', security: 'none' } });
    expect(first.status).toBe(201);
    const dup = await create({ name: 'same-name', protocol: 'trojan', stream: { network: 'tcp', security: 'none' } });
    expect(dup.status).toBe(409);
    expect(dup.body.errors.name).toBe('already taken');
    const missing = await s.api.post('/api/v1/inbound-profiles', {}, { token });
    expect(missing.status).toBe(400);
    expect(Object.keys(missing.body.errors)).toEqual(expect.arrayContaining(['name', 'protocol', 'stream']));
    const extra = await create({ protocol: 'vmess', stream: { network: 'tcp', security: 'none' }, port: 443 });
    expect(extra.status).toBe(400);
    const badProtocol = await create({ protocol: 'wireguard', stream: { network: 'tcp', security: 'none' } });
    expect(badProtocol.body.errors.protocol).toBeDefined();
  });
});

describe('inbound profiles: list', () => {
  it('a pagination walk visits every profile once, oldest first', async () => {
    for (let i = 0; i < 5; i++) await create({ protocol: 'trojan', stream: { network: 'tcp', security: 'none' } });
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
    expect(walked.length).toBeGreaterThan(10);
  });

  it('filters by protocol and by certificate_id', async () => {
    const trojan = await s.api.get('/api/v1/inbound-profiles?protocol=trojan&limit=200', { token });
    expect(trojan.body.items.length).toBeGreaterThanOrEqual(5);
    expect(trojan.body.items.every((p: { protocol: string }) => p.protocol === 'trojan')).toBe(true);
    const byCert = await s.api.get(`/api/v1/inbound-profiles?certificate_id=${certId}&limit=200`, { token });
    expect(byCert.body.items.length).toBeGreaterThan(0);
    expect(byCert.body.items.every((p: any) => p.stream.tls?.certificate_id === certId)).toBe(true);
    expect((await s.api.get('/api/v1/inbound-profiles?protocol=http', { token })).status).toBe(400);
  });
});

describe('inbound profiles: update (merge) and revisions', () => {
  it('a profile edit moves the revision of every node with an inbound of it, once each, and of no other node', async () => {
    const p = await create({ protocol: 'vmess', stream: { network: 'ws', security: 'none' } });
    const q = await create({ protocol: 'vmess', stream: { network: 'ws', security: 'none' } });
    const [n1, n2, n3, n4] = [
      await insertNode(uniq('n')),
      await insertNode(uniq('n')),
      await insertNode(uniq('n')),
      await insertNode(uniq('n')),
    ];
    await bind(n1, p.body.id, 8001);
    await bind(n1, p.body.id, 8002);
    await bind(n2, p.body.id, 8001);
    await bind(n3, q.body.id, 8001);
    const before = { n1: await revision(n1), n2: await revision(n2), n3: await revision(n3), n4: await revision(n4) };
    const res = await patch(p.body.id, { stream: { network: 'ws', security: 'none', ws: { path: '/new' } } });
    expect(res.status).toBe(200);
    expect({ n1: await revision(n1), n2: await revision(n2), n3: await revision(n3), n4: await revision(n4) }).toEqual({
      n1: before.n1 + 1,
      n2: before.n2 + 1,
      n3: before.n3,
      n4: before.n4,
    });
    // A rename is not something nodes run.
    expect((await patch(p.body.id, { name: uniq('renamed') })).status).toBe(200);
    expect(await revision(n1)).toBe(before.n1 + 1);
    // Sniffing, block_bittorrent: nodes run them.
    expect((await patch(p.body.id, { block_bittorrent: true })).status).toBe(200);
    expect(await revision(n1)).toBe(before.n1 + 2);
    expect(await revision(n3)).toBe(before.n3);
    const audit = await s.deps.db
      .selectFrom('audit_log')
      .select('details')
      .where('entity_id', '=', p.body.id)
      .where('action', '=', 'inbound_profile.updated')
      .orderBy('id')
      .executeTakeFirstOrThrow();
    expect((audit.details as any).nodes_bumped).toEqual([n1, n2].sort());
  });

  it('PATCH stream replaces the stream as a whole; sniffing merges field by field; other fields stay', async () => {
    const p = await create({
      protocol: 'vmess',
      stream: { network: 'ws', security: 'none', ws: { path: '/a', headers: { 'X-A': '1' } } },
      sniffing: { enabled: true, dest_override: ['http'], route_only: false },
    });
    const res = await patch(p.body.id, {
      stream: { network: 'grpc', security: 'none', grpc: { service_name: 'svc' } },
      sniffing: { route_only: true },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.stream).toEqual({ network: 'grpc', security: 'none', grpc: { service_name: 'svc', multi_mode: false } });
    expect(res.body.sniffing).toEqual({ enabled: true, dest_override: ['http'], route_only: true });
    expect(res.body.name).toBe(p.body.name);
    expect(res.body.protocol).toBe('vmess');
    expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(p.body.updated_at));
    // The merged result is checked like a creation.
    const bad = await patch(p.body.id, { vless_flow: 'xtls-rprx-vision' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.vless_flow).toBeDefined();
    expect((await patch(p.body.id, { colour: 'red' })).status).toBe(400);
    expect((await patch('ipr_nope', { name: 'x' })).status).toBe(404);
  });

  it('PATCH of a REALITY stream keeps the private key and short ids when omitted, replaces them when given, drops the key when leaving REALITY', async () => {
    const p = await create(vlessReality());
    const original = p.body.stream.reality;
    const priv = await storedKey(p.body.id);
    const kept = await patch(p.body.id, {
      stream: { network: 'tcp', security: 'reality', reality: { ...REALITY, dest: 'www.example.org:443' } },
    });
    expect(kept.status, kept.text).toBe(200);
    expect(kept.body.stream.reality).toMatchObject({
      dest: 'www.example.org:443',
      public_key: original.public_key,
      short_ids: original.short_ids,
    });
    expect(await storedKey(p.body.id)).toBe(priv);

    const jwk = generateKeyPairSync('x25519').privateKey.export({ format: 'jwk' });
    const replaced = await patch(p.body.id, {
      stream: { network: 'tcp', security: 'reality', reality: { ...REALITY, private_key: jwk.d, short_ids: ['aa'] } },
    });
    expect(replaced.body.stream.reality).toMatchObject({ public_key: jwk.x, short_ids: ['aa'], has_private_key: true });
    expect(replaced.text).not.toContain(jwk.d as string);
    expect(await storedKey(p.body.id)).toBe(jwk.d);

    const tls = await patch(p.body.id, { stream: { network: 'tcp', security: 'tls', tls: { certificate_id: certId } } });
    expect(tls.status, tls.text).toBe(200);
    expect(tls.body.stream.reality).toBeUndefined();
    expect(await storedKey(p.body.id)).toBeNull();
    const audits = await s.deps.db.selectFrom('audit_log').select('details').where('entity_id', '=', p.body.id).execute();
    for (const a of audits) {
      expect(JSON.stringify(a.details)).not.toContain(priv);
      expect(JSON.stringify(a.details)).not.toContain(jwk.d);
    }
  });

  it('a protocol change renames the tags of its inbounds (`<protocol>-<port>`); vless_flow null clears', async () => {
    const p = await create(vlessReality());
    const node = await insertNode(uniq('n'));
    const inbound = await bind(node, p.body.id, 443);
    expect(inbound.tag).toBe('vless-443');
    const res = await patch(p.body.id, { protocol: 'trojan', vless_flow: null });
    expect(res.status, res.text).toBe(200);
    expect(res.body.vless_flow).toBeNull();
    expect((await s.api.get(`/api/v1/inbounds/${inbound.id}`, { token })).body.tag).toBe('trojan-443');
  });
});

describe('inbound profiles: delete, roles, audit', () => {
  it('DELETE is refused (409) while inbounds are bound, naming them; then 204 and 404', async () => {
    const p = await create({ protocol: 'vmess', stream: { network: 'tcp', security: 'none' } });
    const node = await insertNode(uniq('n'));
    const a = await bind(node, p.body.id, 9001);
    const b = await bind(node, p.body.id, 9002);
    const del = await s.api.delete(`/api/v1/inbound-profiles/${p.body.id}`, { token });
    expect(del.status).toBe(409);
    expect(del.body.type).toBe('urn:svc:problem:conflict');
    expect(del.body.blocked_by).toEqual({ inbounds: [a.id, b.id].sort() });
    expect(del.body.detail).toContain('inbounds');
    for (const i of [a, b]) expect((await s.api.delete(`/api/v1/inbounds/${i.id}`, { token })).status).toBe(204);
    expect((await s.api.delete(`/api/v1/inbound-profiles/${p.body.id}`, { token })).status).toBe(204);
    expect((await s.api.get(`/api/v1/inbound-profiles/${p.body.id}`, { token })).status).toBe(404);
  });

  it('a viewer reads but gets 403 on every write', async () => {
    const viewer = await adminWithRole(s, token, 'viewer');
    const p = await create({ protocol: 'vmess', stream: { network: 'tcp', security: 'none' } });
    const t = viewer.access_token;
    expect((await s.api.get('/api/v1/inbound-profiles', { token: t })).status).toBe(200);
    expect((await s.api.get(`/api/v1/inbound-profiles/${p.body.id}`, { token: t })).status).toBe(200);
    expect((await create({ protocol: 'vmess', stream: { network: 'tcp', security: 'none' } }, t)).status).toBe(403);
    expect((await s.api.patch(`/api/v1/inbound-profiles/${p.body.id}`, { name: 'x' }, { token: t })).status).toBe(403);
    expect((await s.api.delete(`/api/v1/inbound-profiles/${p.body.id}`, { token: t })).status).toBe(403);
  });

  it('create, update and delete each write an audit row with the acting admin', async () => {
    const p = await create(vlessReality());
    await patch(p.body.id, { name: uniq('audited') });
    await s.api.delete(`/api/v1/inbound-profiles/${p.body.id}`, { token });
    const rows = await s.deps.db.selectFrom('audit_log').selectAll().where('entity_id', '=', p.body.id).orderBy('id').execute();
    expect(rows.map((r) => r.action)).toEqual(['inbound_profile.created', 'inbound_profile.updated', 'inbound_profile.deleted']);
    for (const r of rows) expect(r).toMatchObject({ actor_type: 'admin', actor_id: ownerId, entity_type: 'inbound_profile' });
    expect(rows[0]?.details).toMatchObject({ protocol: 'vless', network: 'tcp', security: 'reality' });
    expect(rows[1]?.details).toMatchObject({ changed: ['name'] });
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
    expect(doc.paths['/api/v1/certificates/{id}/renew']).toBeUndefined();
  });
});

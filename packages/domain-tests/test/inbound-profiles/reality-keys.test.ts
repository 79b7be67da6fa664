import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { CreateInboundProfileInput, getInboundProfile, parseInput, UpdateInboundProfileInput, updateInboundProfile } from '@svc/domain';
import { describe, expect, it } from 'vitest';
import { auditOf, fileTestbed, inputErrors, refusal } from '../support.ts';

const t = fileTestbed();

const REALITY = { dest: 'www.example.com:443', server_names: ['www.example.com'] };
const vlessReality = (extra: Record<string, unknown> = {}) =>
  t.f.profile({
    protocol: 'vless',
    vless_flow: 'xtls-rprx-vision',
    stream: { network: 'tcp', security: 'reality', reality: { ...REALITY, ...extra } },
  });
const realityErrors = (reality: Record<string, unknown>) =>
  inputErrors(CreateInboundProfileInput, { name: 'p', protocol: 'vless', stream: { network: 'tcp', security: 'reality', reality } });
const update = (id: string, input: Record<string, unknown>) =>
  updateInboundProfile(t.bed.ctx(), id, parseInput(UpdateInboundProfileInput, input));

const PKCS8_X25519 = Buffer.from('302e020100300506032b656e04220420', 'hex');
const publicOf = (priv: string) =>
  createPublicKey(
    createPrivateKey({ key: Buffer.concat([PKCS8_X25519, Buffer.from(priv, 'base64url')]), format: 'der', type: 'pkcs8' }),
  ).export({ format: 'jwk' }).x as string;
const x25519 = () => generateKeyPairSync('x25519').privateKey.export({ format: 'jwk' }) as { d: string; x: string };
const storedRow = (id: string) => t.bed.deps.db.selectFrom('inbound_profiles').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const storedKey = async (id: string) => {
  const sealed = (await storedRow(id)).reality_private_key_enc;
  return sealed === null ? null : t.bed.deps.secrets.open(sealed);
};

describe('REALITY keys of an inbound profile', () => {
  it('without a private key an X25519 pair is generated; the private key is sealed, never in the stream or the view', async () => {
    const p = await vlessReality();
    expect(p.id).toMatch(/^ipr_/);
    const r = p.stream.reality;
    expect(r).toMatchObject({
      dest: 'www.example.com:443',
      server_names: ['www.example.com'],
      fingerprint: 'chrome',
      has_private_key: true,
    });
    expect(r?.public_key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(r).not.toHaveProperty('private_key');
    expect(r?.short_ids).toHaveLength(1);
    expect(r?.short_ids[0]).toMatch(/^[0-9a-f]{8}$/);
    const priv = (await storedKey(p.id)) as string;
    expect(priv).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(publicOf(priv)).toBe(r?.public_key);
    const row = await storedRow(p.id);
    expect(JSON.stringify(row.stream)).not.toContain(priv);
    expect(row.reality_private_key_enc).not.toContain(priv);
    const read = await getInboundProfile(t.bed.ctx(), p.id);
    expect(read).toEqual(p);
    expect(JSON.stringify(read)).not.toContain(priv);
    expect(p).toMatchObject({
      protocol: 'vless',
      vless_flow: 'xtls-rprx-vision',
      shadowsocks_method: null,
      block_bittorrent: false,
      sniffing: { enabled: true, dest_override: ['http', 'tls', 'quic'], route_only: false },
    });
    expect(p.stream.tcp).toEqual({ accept_proxy_protocol: false });
  });

  it('a given private key is kept and its public key derived; short ids are kept as given', async () => {
    const jwk = x25519();
    const p = await vlessReality({ private_key: jwk.d, short_ids: ['ab', '', '0123456789abcdef'] });
    expect(p.stream.reality?.public_key).toBe(jwk.x);
    expect(p.stream.reality?.short_ids).toEqual(['ab', '', '0123456789abcdef']);
    expect(JSON.stringify(p)).not.toContain(jwk.d);
    expect(await storedKey(p.id)).toBe(jwk.d);
    // A public key sent along is accepted when it is the derived one.
    expect((await vlessReality({ private_key: jwk.d, public_key: jwk.x })).stream.reality?.public_key).toBe(jwk.x);
  });

  it('a public key that does not belong to the private key, a malformed private key and malformed short ids are refused per field', async () => {
    const jwk = x25519();
    const wrong = await refusal(vlessReality({ private_key: jwk.d, public_key: x25519().x }));
    expect(wrong).toMatchObject({ type: 'validation', errors: { 'stream.reality.public_key': expect.any(String) } });
    expect(realityErrors({ ...REALITY, private_key: 'not-a-key' })).toHaveProperty(['stream.reality.private_key']);
    expect(realityErrors({ ...REALITY, short_ids: ['xyz'] })).toHaveProperty(['stream.reality.short_ids.0']);
    expect(realityErrors({ ...REALITY, short_ids: [] })).toHaveProperty(['stream.reality.short_ids']);
  });

  it('REALITY needs a dest (host:port or a port) and at least one server name', () => {
    expect(realityErrors({ server_names: ['a.example'] })).toHaveProperty(['stream.reality.dest']);
    expect(realityErrors({ ...REALITY, dest: 'no port' })).toHaveProperty(['stream.reality.dest']);
    expect(realityErrors({ ...REALITY, server_names: [] })['stream.reality.server_names']).toBe('at least one server name');
  });

  it('an edit keeps the private key and short ids when omitted, replaces them when given, drops the key when leaving REALITY; no audit entry holds a key', async () => {
    const cert = await t.f.certificate();
    const p = await vlessReality();
    const original = p.stream.reality;
    const priv = (await storedKey(p.id)) as string;
    const kept = await update(p.id, {
      stream: { network: 'tcp', security: 'reality', reality: { ...REALITY, dest: 'www.example.org:443' } },
    });
    expect(kept.stream.reality).toMatchObject({
      dest: 'www.example.org:443',
      public_key: original?.public_key,
      short_ids: original?.short_ids,
    });
    expect(await storedKey(p.id)).toBe(priv);

    const jwk = x25519();
    const replaced = await update(p.id, {
      stream: { network: 'tcp', security: 'reality', reality: { ...REALITY, private_key: jwk.d, short_ids: ['aa'] } },
    });
    expect(replaced.stream.reality).toMatchObject({ public_key: jwk.x, short_ids: ['aa'], has_private_key: true });
    expect(JSON.stringify(replaced)).not.toContain(jwk.d);
    expect(await storedKey(p.id)).toBe(jwk.d);

    const tls = await update(p.id, { stream: { network: 'tcp', security: 'tls', tls: { certificate_id: cert.id } } });
    expect(tls.stream.reality).toBeUndefined();
    expect(await storedKey(p.id)).toBeNull();
    for (const a of await auditOf(t.bed, p.id)) {
      expect(JSON.stringify(a.details)).not.toContain(priv);
      expect(JSON.stringify(a.details)).not.toContain(jwk.d);
    }
  });
});

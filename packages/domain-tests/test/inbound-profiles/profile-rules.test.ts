import { CreateInboundProfileInput, parseInput, UpdateInboundProfileInput, updateInboundProfile } from '@svc/domain';
import { beforeAll, describe, expect, it } from 'vitest';
import { fileTestbed, inputErrors, refusal } from '../support.ts';

const t = fileTestbed();
let certId: string;
beforeAll(async () => {
  certId = (await t.f.certificate()).id;
});

const TCP = { network: 'tcp', security: 'none' } as const;
const errorsOf = (input: Record<string, unknown>) => inputErrors(CreateInboundProfileInput, { name: 'p', ...input });
const update = (id: string, input: Record<string, unknown>) =>
  updateInboundProfile(t.bed.ctx(), id, parseInput(UpdateInboundProfileInput, input));
const serverKeyOf = async (id: string) =>
  (await t.bed.deps.db.selectFrom('inbound_profiles').select('shadowsocks_server_key').where('id', '=', id).executeTakeFirstOrThrow())
    .shadowsocks_server_key;

describe('the rules of a whole inbound profile', () => {
  it('TLS: the certificate must exist; it is kept as the profile certificate reference; ALPN is a list of h3, h2, http/1.1', async () => {
    const p = await t.f.profile({
      protocol: 'trojan',
      stream: { network: 'ws', security: 'tls', tls: { certificate_id: certId, server_names: ['example.com'], alpn: 'http/1.1' } },
    });
    expect(p.stream.tls).toEqual({ server_names: ['example.com'], alpn: 'http/1.1', min_version: '1.2', certificate_id: certId });
    const row = await t.bed.deps.db
      .selectFrom('inbound_profiles')
      .select('certificate_id')
      .where('id', '=', p.id)
      .executeTakeFirstOrThrow();
    expect(row.certificate_id).toBe(certId);
    const missing = await refusal(
      t.f.profile({ protocol: 'trojan', stream: { network: 'tcp', security: 'tls', tls: { certificate_id: 'crt_nope' } } }),
    );
    expect(missing).toMatchObject({ type: 'validation', errors: { 'stream.tls.certificate_id': 'no such certificate' } });
    expect(
      errorsOf({ protocol: 'trojan', stream: { network: 'tcp', security: 'tls', tls: { certificate_id: certId, alpn: 'spdy' } } }),
    ).toHaveProperty(['stream.tls.alpn']);
  });

  it('vless_flow: only xtls-rprx-vision, only for vless over tcp with tls or reality', async () => {
    const vmess = await refusal(
      t.f.profile({
        protocol: 'vmess',
        vless_flow: 'xtls-rprx-vision',
        stream: { network: 'tcp', security: 'reality', reality: { dest: 'www.example.com:443', server_names: ['www.example.com'] } },
      }),
    );
    expect(vmess.errors?.vless_flow).toMatch(/only for protocol vless/);
    const overWs = await refusal(
      t.f.profile({
        protocol: 'vless',
        vless_flow: 'xtls-rprx-vision',
        stream: { network: 'ws', security: 'tls', tls: { certificate_id: certId } },
      }),
    );
    expect(overWs.errors?.vless_flow).toMatch(/tcp/);
    expect((await refusal(t.f.profile({ protocol: 'vless', vless_flow: 'xtls-rprx-vision', stream: TCP }))).errors).toHaveProperty(
      'vless_flow',
    );
    expect(errorsOf({ protocol: 'vless', vless_flow: 'xtls-rprx-direct', stream: TCP })).toHaveProperty('vless_flow');
    await t.f.profile({
      protocol: 'vless',
      vless_flow: 'xtls-rprx-vision',
      stream: { network: 'tcp', security: 'tls', tls: { certificate_id: certId } },
    });
  });

  it('shadowsocks requires a method from the Xray list (not the single-user chacha20 2022); other protocols refuse one', async () => {
    expect((await refusal(t.f.profile({ protocol: 'shadowsocks', stream: TCP }))).errors?.shadowsocks_method).toMatch(/required/);
    expect(errorsOf({ protocol: 'shadowsocks', shadowsocks_method: 'rc4-md5', stream: TCP })).toHaveProperty('shadowsocks_method');
    // Xray serves several users with chacha20 2022 only one at a time: refused.
    expect(errorsOf({ protocol: 'shadowsocks', shadowsocks_method: '2022-blake3-chacha20-poly1305', stream: TCP })).toHaveProperty(
      'shadowsocks_method',
    );
    const ok = await t.f.profile({ protocol: 'shadowsocks', shadowsocks_method: '2022-blake3-aes-128-gcm', stream: TCP });
    expect(ok.shadowsocks_method).toBe('2022-blake3-aes-128-gcm');
    const onVless = await refusal(t.f.profile({ protocol: 'vless', shadowsocks_method: 'aes-128-gcm', stream: TCP }));
    expect(onVless.errors?.shadowsocks_method).toMatch(/only for protocol shadowsocks/);
  });

  it('a Shadowsocks 2022 profile gets a server key of its method size, never shown; a new method a new key; classic methods none', async () => {
    const p = await t.f.profile({ protocol: 'shadowsocks', shadowsocks_method: '2022-blake3-aes-128-gcm', stream: TCP });
    const k128 = await serverKeyOf(p.id);
    expect(Buffer.from(k128 ?? '', 'base64')).toHaveLength(16);
    expect(JSON.stringify(p)).not.toContain(k128);
    await update(p.id, { sniffing: { enabled: false } });
    expect(await serverKeyOf(p.id)).toBe(k128);
    await update(p.id, { shadowsocks_method: '2022-blake3-aes-256-gcm' });
    expect(Buffer.from((await serverKeyOf(p.id)) ?? '', 'base64')).toHaveLength(32);
    await update(p.id, { shadowsocks_method: 'aes-256-gcm' });
    expect(await serverKeyOf(p.id)).toBeNull();
  });

  it('sniffing: defaults, given values without repeats; blocking bittorrent needs sniffing', async () => {
    const p = await t.f.profile({
      protocol: 'vmess',
      stream: TCP,
      sniffing: { enabled: true, dest_override: ['tls', 'bittorrent', 'tls'], route_only: true },
      block_bittorrent: true,
    });
    expect(p.sniffing).toEqual({ enabled: true, dest_override: ['tls', 'bittorrent'], route_only: true });
    expect(p.block_bittorrent).toBe(true);
    const off = await refusal(t.f.profile({ protocol: 'vmess', stream: TCP, sniffing: { enabled: false }, block_bittorrent: true }));
    expect(off.errors).toHaveProperty('block_bittorrent');
    expect(errorsOf({ protocol: 'vmess', stream: TCP, sniffing: { dest_override: ['fakedns'] } })).toHaveProperty([
      'sniffing.dest_override.0',
    ]);
  });

  it('names are unique (a conflict naming the field); name, protocol and stream are required and other fields refused', async () => {
    await t.f.profile({ name: 'same-name', protocol: 'vmess', stream: TCP });
    expect(await refusal(t.f.profile({ name: 'same-name', protocol: 'trojan', stream: TCP }))).toMatchObject({
      type: 'conflict',
      errors: { name: 'already taken' },
    });
    expect(Object.keys(inputErrors(CreateInboundProfileInput, {}))).toEqual(expect.arrayContaining(['name', 'protocol', 'stream']));
    expect(errorsOf({ protocol: 'vmess', stream: TCP, port: 443 })).not.toEqual({});
    expect(errorsOf({ protocol: 'wireguard', stream: TCP })).toHaveProperty('protocol');
  });
});

import { describe, expect, it } from 'vitest';
import type { ServerEntry } from '../src/model.ts';
import { PRIVATE_CIDRS, renderXrayJson, XRAY_HTTP_PORT, XRAY_SOCKS_PORT } from '../src/xray-json.ts';
import { doc, everyCombination } from './fixtures.ts';

/** The array is parsed with JSON.parse and each config checked against Xray's outbound and streamSettings fields. */

type Json = Record<string, any>;

function expectSettings(proxy: Json, s: ServerEntry) {
  const server = { address: s.address, port: s.port };
  const vision = s.flow === 'xtls-rprx-vision' && s.stream.network === 'tcp' && s.stream.security !== 'none';
  const expected = {
    vless: { vnext: [{ ...server, users: [{ id: s.uuid, encryption: 'none', ...(vision ? { flow: s.flow } : {}) }] }] },
    vmess: { vnext: [{ ...server, users: [{ id: s.uuid, alterId: 0, security: 'auto' }] }] },
    trojan: { servers: [{ ...server, password: s.password }] },
    shadowsocks: { servers: [{ ...server, method: s.method, password: s.password }] },
  }[s.protocol];
  expect(proxy).toMatchObject({ tag: 'proxy', protocol: s.protocol });
  expect(proxy.settings).toEqual(expected);
}

function expectStream(stream: Json, s: ServerEntry) {
  const { network, security } = s.stream;
  expect(stream.network).toBe(network);
  expect(stream.security).toBe(security);
  const transportKeys = Object.keys(stream).filter((k) => k.endsWith('Settings') && k !== 'tlsSettings' && k !== 'realitySettings');
  expect(transportKeys).toEqual(network === 'tcp' ? [] : [`${network}Settings`]);
  if (network === 'ws')
    expect(stream.wsSettings).toEqual({ path: s.stream.ws?.path, ...(s.stream.ws?.host ? { headers: { Host: s.stream.ws.host } } : {}) });
  if (network === 'httpupgrade')
    expect(stream.httpupgradeSettings).toEqual({ path: s.stream.httpupgrade?.path, host: s.stream.httpupgrade?.host });
  if (network === 'grpc')
    expect(stream.grpcSettings).toEqual({ serviceName: s.stream.grpc?.service_name, multiMode: s.stream.grpc?.multi_mode });
  if (network === 'xhttp') {
    const x = s.stream.xhttp;
    expect(stream.xhttpSettings).toEqual({ path: x?.path, ...(x?.host ? { host: x.host } : {}), mode: x?.mode.replace('_', '-') });
  }
  if (security === 'tls') {
    const t = s.stream.tls;
    expect(stream.tlsSettings).toEqual({
      ...(t?.sni ? { serverName: t.sni } : {}),
      ...(t?.alpn.length ? { alpn: t.alpn } : {}),
      ...(t?.fingerprint ? { fingerprint: t.fingerprint } : {}),
      ...(t?.allow_insecure ? { allowInsecure: true } : {}),
    });
  } else expect(stream).not.toHaveProperty('tlsSettings');
  if (security === 'reality') {
    const r = s.stream.reality;
    expect(stream.realitySettings).toEqual({
      serverName: r?.sni,
      publicKey: r?.public_key,
      shortId: r?.short_id,
      fingerprint: r?.fingerprint || 'chrome',
      spiderX: r?.spider_x,
    });
  } else expect(stream).not.toHaveProperty('realitySettings');
}

describe('Xray client JSON (one config per server)', () => {
  const servers = everyCombination();
  const configs = JSON.parse(renderXrayJson(doc(servers))) as Json[];

  it('one config per server, in order, each named by remarks', () => {
    expect(configs.map((c) => c.remarks)).toEqual(servers.map((s) => s.name));
  });

  it.each(servers.map((s, i) => [s.name, s, i] as const))('%s', (_name, s, i) => {
    const c = configs[i] as Json;
    expect(c.inbounds).toEqual([
      expect.objectContaining({
        tag: 'socks',
        protocol: 'socks',
        listen: '127.0.0.1',
        port: XRAY_SOCKS_PORT,
        sniffing: { enabled: true, destOverride: ['http', 'tls'] },
      }),
      expect.objectContaining({
        tag: 'http',
        protocol: 'http',
        listen: '127.0.0.1',
        port: XRAY_HTTP_PORT,
        sniffing: { enabled: true, destOverride: ['http', 'tls'] },
      }),
    ]);
    expect(c.outbounds.map((o: Json) => [o.tag, o.protocol])).toEqual([
      ['proxy', s.protocol],
      ['direct', 'freedom'],
      ['block', 'blackhole'],
    ]);
    expectSettings(c.outbounds[0], s);
    expectStream(c.outbounds[0].streamSettings, s);
    expect(c.routing.rules).toEqual([{ type: 'field', ip: PRIVATE_CIDRS, outboundTag: 'direct' }]);
  });
});

import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CLASH_AUTO_GROUP, CLASH_SELECT_GROUP, clashMetaSkipReason, renderClashMeta } from '../src/clash-meta.ts';
import type { ServerEntry } from '../src/model.ts';
import { doc, everyCombination, shadowsocksServers, trojanServers, vlessServers } from './fixtures.ts';

/** The YAML is parsed back (as YAML 1.2, what mihomo's go-yaml reads, and as 1.1) and each proxy checked against mihomo's fields. */

type Proxy = Record<string, any>;
interface ClashConfig {
  'mixed-port': number;
  mode: string;
  proxies: Proxy[];
  'proxy-groups': { name: string; type: string; proxies: string[]; url?: string }[];
  rules: string[];
}

const load = (yaml: string): ClashConfig => parse(yaml) as ClashConfig;

/** The fields mihomo requires (its `proxy:"..."` tags without omitempty) for each type, and their types. */
const REQUIRED: Record<string, Record<string, string>> = {
  vless: { name: 'string', server: 'string', port: 'number', uuid: 'string' },
  vmess: { name: 'string', server: 'string', port: 'number', uuid: 'string', alterId: 'number', cipher: 'string' },
  trojan: { name: 'string', server: 'string', port: 'number', password: 'string' },
  ss: { name: 'string', server: 'string', port: 'number', cipher: 'string', password: 'string' },
};

function expectProxyMatches(p: Proxy, s: ServerEntry) {
  const type = s.protocol === 'shadowsocks' ? 'ss' : s.protocol;
  expect(p.type).toBe(type);
  for (const [field, t] of Object.entries(REQUIRED[type] ?? {})) expect(typeof p[field], `${s.name}: ${field}`).toBe(t);
  expect(p).toMatchObject({ name: s.name, server: s.address, port: s.port, udp: true });
  if (type === 'ss') return expect(p).toMatchObject({ cipher: s.method, password: s.password });
  if (type === 'trojan') expect(p.password).toBe(s.password);
  else expect(p.uuid).toBe(s.uuid);
  const { network, security } = s.stream;
  // Trojan has no tls switch (always TLS); vless/vmess say it, true for tls and REALITY.
  if (type === 'trojan') expect(p).not.toHaveProperty('tls');
  else expect(p.tls).toBe(security !== 'none');
  const nameKey = type === 'trojan' ? 'sni' : 'servername';
  if (security === 'tls') {
    const t = s.stream.tls;
    expect(p[nameKey]).toBe(t?.sni || undefined);
    expect(p.alpn).toEqual(t?.alpn.length ? t.alpn : undefined);
    expect(p['client-fingerprint']).toBe(t?.fingerprint || undefined);
    expect(p['skip-cert-verify']).toBe(t?.allow_insecure || undefined);
  }
  if (security === 'reality') {
    const r = s.stream.reality;
    expect(p[nameKey]).toBe(r?.sni);
    expect(p['reality-opts']).toEqual({ 'public-key': r?.public_key, ...(r?.short_id ? { 'short-id': r.short_id } : {}) });
    expect(p['client-fingerprint']).toBe(r?.fingerprint || 'chrome');
  }
  const vision = s.flow === 'xtls-rprx-vision' && network === 'tcp' && security !== 'none';
  expect(p.flow).toBe(vision ? 'xtls-rprx-vision' : undefined);
  switch (network) {
    case 'tcp':
      return expect(p.network).toBe('tcp');
    case 'ws': {
      expect(p.network).toBe('ws');
      const headers = s.stream.ws?.host ? { Host: s.stream.ws.host } : undefined;
      expect(p['ws-opts'].headers).toEqual(headers);
      expect(p['ws-opts'].path).toBe(s.stream.ws?.path.replace(/\?ed=\d+$/, ''));
      return expect(p['ws-opts']['v2ray-http-upgrade']).toBeUndefined();
    }
    case 'httpupgrade':
      expect(p.network).toBe('ws');
      return expect(p['ws-opts']).toEqual({
        path: s.stream.httpupgrade?.path,
        headers: { Host: s.stream.httpupgrade?.host },
        'v2ray-http-upgrade': true,
      });
    case 'grpc':
      expect(p.network).toBe('grpc');
      return expect(p['grpc-opts']).toEqual({ 'grpc-service-name': s.stream.grpc?.service_name });
    case 'xhttp': {
      expect(p.network).toBe('xhttp');
      const x = s.stream.xhttp;
      const mode = x?.mode === 'auto' ? undefined : x?.mode.replace('_', '-');
      return expect(p['xhttp-opts']).toEqual({ path: x?.path, ...(x?.host ? { host: x.host } : {}), ...(mode ? { mode } : {}) });
    }
  }
}

describe('Clash Meta / mihomo YAML', () => {
  const servers = everyCombination();
  const rendered = servers.filter((s) => !clashMetaSkipReason(s));
  const config = load(renderClashMeta(doc(servers)));

  it('keeps every combination mihomo can express, in order, and skips only plain trojan', () => {
    expect(servers.filter((s) => clashMetaSkipReason(s)).map((s) => s.name)).toEqual(
      trojanServers()
        .filter((s) => s.stream.security === 'none')
        .map((s) => s.name),
    );
    expect(config.proxies.map((p) => p.name)).toEqual(rendered.map((s) => s.name));
  });

  it.each(rendered.map((s, i) => [s.name, s, i] as const))('%s', (_name, s, i) => {
    expectProxyMatches(config.proxies[i] as Proxy, s);
  });

  it('a select group over the url-test group and every proxy, MATCH to it, mode rule', () => {
    const names = rendered.map((s) => s.name);
    expect(config['proxy-groups']).toEqual([
      { name: CLASH_SELECT_GROUP, type: 'select', proxies: [CLASH_AUTO_GROUP, ...names] },
      expect.objectContaining({ name: CLASH_AUTO_GROUP, type: 'url-test', proxies: names, url: expect.stringMatching(/^https:\/\//) }),
    ]);
    expect(config.rules).toEqual([`MATCH,${CLASH_SELECT_GROUP}`]);
    expect(config.mode).toBe('rule');
    expect(config['mixed-port']).toBe(7890);
  });

  it('an early-data WebSocket path becomes max-early-data with the Sec-WebSocket-Protocol header', () => {
    const p = config.proxies.find((x) => x.name === 'vmess ws tls') as Proxy;
    expect(p['ws-opts']).toEqual({
      path: '/vmess-ws',
      headers: { Host: 'cdn.example.com' },
      'max-early-data': 2560,
      'early-data-header-name': 'Sec-WebSocket-Protocol',
    });
  });

  it('strings a YAML 1.1 reader would retype stay strings (short ids, passwords, IPv6)', () => {
    const tricky: ServerEntry = { ...(shadowsocksServers()[0] as ServerEntry), name: 'yes', address: '2001:0:0:1', password: '0123' };
    const yaml = renderClashMeta(doc([tricky]));
    for (const version of ['1.1', '1.2'] as const) {
      const p = (parse(yaml, { version }) as ClashConfig).proxies[0] as Proxy;
      expect([p.name, p.server, p.password]).toEqual(['yes', '2001:0:0:1', '0123']);
    }
  });

  it('XHTTP is VLESS-only in mihomo, and can be turned off for older cores', () => {
    const xhttpTrojan: ServerEntry = {
      ...(trojanServers()[1] as ServerEntry),
      stream: { network: 'xhttp', security: 'tls', xhttp: { path: '/', host: '', mode: 'auto' } },
    };
    expect(clashMetaSkipReason(xhttpTrojan)).toMatch(/VLESS only/);
    const vless = vlessServers();
    const off = load(renderClashMeta(doc(vless), { xhttp: false }));
    expect(off.proxies.map((p) => p.name)).toEqual(vless.filter((s) => s.stream.network !== 'xhttp').map((s) => s.name));
  });

  it('a server named like a group or a built-in policy is renamed, and the groups follow', () => {
    const [a, b] = shadowsocksServers() as [ServerEntry, ServerEntry];
    const c = load(
      renderClashMeta(
        doc([
          { ...a, name: 'Proxy' },
          { ...b, name: 'DIRECT' },
        ]),
      ),
    );
    expect(c.proxies.map((p) => p.name)).toEqual(['Proxy (2)', 'DIRECT (2)']);
    expect(c['proxy-groups'][0]?.proxies).toEqual(['Auto', 'Proxy (2)', 'DIRECT (2)']);
  });
});

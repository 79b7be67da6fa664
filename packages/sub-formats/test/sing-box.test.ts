import { describe, expect, it } from 'vitest';
import type { ServerEntry } from '../src/model.ts';
import { renderSingBox, SING_BOX_DIRECT, SING_BOX_SELECTOR, SING_BOX_URLTEST, singBoxSkipReason } from '../src/sing-box.ts';
import { doc, everyCombination, shadowsocksServers } from './fixtures.ts';

/** The profile is parsed with JSON.parse; outbounds are checked against sing-box's field names and the tag graph for dangling references. */

type Outbound = Record<string, any>;
interface SingBoxConfig {
  dns: { servers: { type: string; tag: string; detour?: string }[]; final: string };
  inbounds: { type: string; tag: string }[];
  outbounds: Outbound[];
  route: { rules: Record<string, unknown>[]; final: string; default_domain_resolver: string };
}

const load = (json: string) => JSON.parse(json) as SingBoxConfig;

function expectOutboundMatches(o: Outbound, s: ServerEntry) {
  const { network, security } = s.stream;
  expect(o).toMatchObject({ tag: s.name, type: s.protocol, server: s.address, server_port: s.port });
  if (s.protocol === 'shadowsocks')
    return expect(o).toEqual({
      tag: s.name,
      type: 'shadowsocks',
      server: s.address,
      server_port: s.port,
      method: s.method,
      password: s.password,
    });
  if (s.protocol === 'trojan') expect(o.password).toBe(s.password);
  else expect(o.uuid).toBe(s.uuid);
  if (s.protocol === 'vmess') expect(o).toMatchObject({ security: 'auto', alter_id: 0 });
  const vision = s.flow === 'xtls-rprx-vision' && network === 'tcp' && security !== 'none';
  expect(o.flow).toBe(vision ? 'xtls-rprx-vision' : undefined);
  if (security === 'none') expect(o.tls).toBeUndefined();
  if (security === 'tls') {
    const t = s.stream.tls;
    expect(o.tls).toEqual({
      enabled: true,
      ...(t?.sni ? { server_name: t.sni } : {}),
      ...(t?.alpn.length ? { alpn: t.alpn } : {}),
      ...(t?.allow_insecure ? { insecure: true } : {}),
      ...(t?.fingerprint ? { utls: { enabled: true, fingerprint: t.fingerprint } } : {}),
    });
  }
  if (security === 'reality') {
    const r = s.stream.reality;
    expect(o.tls).toEqual({
      enabled: true,
      server_name: r?.sni,
      utls: { enabled: true, fingerprint: r?.fingerprint || 'chrome' },
      reality: { enabled: true, public_key: r?.public_key, ...(r?.short_id ? { short_id: r.short_id } : {}) },
    });
  }
  switch (network) {
    case 'tcp':
      return expect(o.transport).toBeUndefined();
    case 'ws':
      expect(o.transport).toMatchObject({ type: 'ws', path: s.stream.ws?.path.replace(/\?ed=\d+$/, '') });
      return expect(o.transport.headers).toEqual(s.stream.ws?.host ? { Host: s.stream.ws.host } : undefined);
    case 'httpupgrade':
      return expect(o.transport).toEqual({ type: 'httpupgrade', path: s.stream.httpupgrade?.path, host: s.stream.httpupgrade?.host });
    case 'grpc':
      return expect(o.transport).toEqual({ type: 'grpc', service_name: s.stream.grpc?.service_name });
    case 'xhttp':
      throw new Error('xhttp must have been skipped');
  }
}

describe('sing-box JSON', () => {
  const servers = everyCombination();
  const rendered = servers.filter((s) => !singBoxSkipReason(s));
  const config = load(renderSingBox(doc(servers)));
  const proxies = config.outbounds.slice(2, -1);

  it('keeps every combination but XHTTP, in order, between the groups and direct', () => {
    expect(servers.filter((s) => singBoxSkipReason(s)).every((s) => s.stream.network === 'xhttp')).toBe(true);
    expect(rendered.length).toBe(servers.length - 3);
    expect(proxies.map((o) => o.tag)).toEqual(rendered.map((s) => s.name));
    expect(config.outbounds.at(-1)).toEqual({ type: 'direct', tag: SING_BOX_DIRECT });
  });

  it.each(rendered.map((s, i) => [s.name, s, i] as const))('%s', (_name, s, i) => {
    expectOutboundMatches(proxies[i] as Outbound, s);
  });

  it('selector (default: urltest) and urltest over every server; no tag dangles or repeats', () => {
    const tags = rendered.map((s) => s.name);
    expect(config.outbounds[0]).toEqual({
      type: 'selector',
      tag: SING_BOX_SELECTOR,
      outbounds: [SING_BOX_URLTEST, ...tags],
      default: SING_BOX_URLTEST,
    });
    expect(config.outbounds[1]).toMatchObject({ type: 'urltest', tag: SING_BOX_URLTEST, outbounds: tags });
    const outboundTags = config.outbounds.map((o) => o.tag as string);
    expect(new Set(outboundTags).size).toBe(outboundTags.length);
    const referenced = [
      ...config.outbounds.flatMap((o) => (o.outbounds as string[] | undefined) ?? []),
      ...config.dns.servers.flatMap((d) => (d.detour ? [d.detour] : [])),
      ...config.route.rules.flatMap((r) => (typeof r.outbound === 'string' ? [r.outbound] : [])),
      config.route.final,
    ];
    for (const tag of referenced) expect(outboundTags).toContain(tag);
    const dnsTags = config.dns.servers.map((d) => d.tag);
    expect(dnsTags).toContain(config.dns.final);
    expect(dnsTags).toContain(config.route.default_domain_resolver);
  });

  it('the 1.11+ shape: rule actions, no legacy block/dns outbounds, no inbound sniff fields', () => {
    expect(config.outbounds.some((o) => o.type === 'block' || o.type === 'dns')).toBe(false);
    expect(config.route.rules.slice(0, 2)).toEqual([{ action: 'sniff' }, { protocol: 'dns', action: 'hijack-dns' }]);
    for (const i of config.inbounds)
      for (const legacy of ['sniff', 'sniff_override_destination', 'domain_strategy']) expect(i).not.toHaveProperty(legacy);
    expect(config.inbounds.map((i) => i.type)).toEqual(['tun', 'mixed']);
    for (const d of config.dns.servers) expect(d).not.toHaveProperty('address');
  });

  it('an early-data WebSocket path becomes max_early_data with the Sec-WebSocket-Protocol header', () => {
    expect(proxies.find((o) => o.tag === 'vmess ws tls')?.transport).toEqual({
      type: 'ws',
      path: '/vmess-ws',
      headers: { Host: 'cdn.example.com' },
      max_early_data: 2560,
      early_data_header_name: 'Sec-WebSocket-Protocol',
    });
  });

  it('a server named like a reserved tag is renamed', () => {
    const [a] = shadowsocksServers() as [ServerEntry];
    const c = load(renderSingBox(doc([{ ...a, name: 'direct' }])));
    expect(c.outbounds.map((o) => o.tag)).toEqual(['proxy', 'auto', 'direct (2)', 'direct']);
  });
});

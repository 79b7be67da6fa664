import { describe, expect, it } from 'vitest';
import type { ServerEntry } from '../src/model.ts';
import { base64List, shareLink, shareLinkSkipReason, shareLinks } from '../src/share-links.ts';
import { doc, everyCombination, shadowsocksServers, trojanServers, vlessServers, vmessServers } from './fixtures.ts';

/** Every link is read back with the WHATWG URL parser (or base64 + JSON.parse for vmess) and compared with the model. */

/** What a link's host must parse to: IPv6 in brackets. */
const expectedHostname = (s: ServerEntry) => (s.address.includes(':') ? `[${s.address}]` : s.address);

/** Security and transport parameters, checked for vless and trojan alike. */
function expectStreamParams(s: ServerEntry, q: URLSearchParams) {
  const { network, security } = s.stream;
  expect(q.get('type')).toBe(network);
  expect(q.get('security')).toBe(security);
  if (security === 'tls' && s.stream.tls) {
    const t = s.stream.tls;
    expect(q.get('sni')).toBe(t.sni || null);
    expect(q.get('fp')).toBe(t.fingerprint || null);
    expect(q.get('alpn')?.split(',') ?? []).toEqual(t.alpn);
    expect(q.get('allowInsecure')).toBe(t.allow_insecure ? '1' : null);
  }
  if (security === 'reality' && s.stream.reality) {
    const r = s.stream.reality;
    expect(q.get('sni')).toBe(r.sni);
    expect(q.get('pbk')).toBe(r.public_key);
    expect(q.get('sid')).toBe(r.short_id || null);
    expect(q.get('spx')).toBe(r.spider_x || null);
    expect(q.get('fp')).toBe(r.fingerprint || 'chrome');
  }
  if (security === 'none') for (const k of ['sni', 'fp', 'alpn', 'pbk', 'sid', 'allowInsecure']) expect(q.has(k)).toBe(false);
  if (network === 'tcp') expect(q.get('headerType')).toBe('none');
  if (network === 'ws' || network === 'httpupgrade' || network === 'xhttp') {
    const t = s.stream[network];
    expect(q.get('path')).toBe(t?.path);
    expect(q.get('host')).toBe(t?.host || null);
  }
  if (network === 'xhttp') expect(q.get('mode')).toBe(s.stream.xhttp?.mode.replace('_', '-'));
  if (network === 'grpc') {
    expect(q.get('serviceName')).toBe(s.stream.grpc?.service_name);
    expect(q.get('mode')).toBe(s.stream.grpc?.multi_mode ? 'multi' : 'gun');
  }
}

function expectUrlBasics(url: URL, s: ServerEntry, protocol: string) {
  expect(url.protocol).toBe(protocol);
  expect(url.hostname).toBe(expectedHostname(s));
  expect(url.port).toBe(String(s.port));
  expect(decodeURIComponent(url.hash.slice(1))).toBe(s.name);
}

describe('vless:// links', () => {
  it.each(vlessServers().map((s) => [s.name, s] as const))('%s', (_name, s) => {
    const url = new URL(shareLink(s));
    expectUrlBasics(url, s, 'vless:');
    expect(decodeURIComponent(url.username)).toBe(s.uuid);
    expect(url.password).toBe('');
    const q = url.searchParams;
    expect(q.get('encryption')).toBe('none');
    const vision = s.flow === 'xtls-rprx-vision' && s.stream.network === 'tcp' && s.stream.security !== 'none';
    expect(q.get('flow')).toBe(vision ? 'xtls-rprx-vision' : null);
    expectStreamParams(s, q);
  });

  it('a path with spaces, ? and & round-trips, encoded with %20 rather than +', () => {
    const s = vlessServers().find((x) => x.name === 'vless ws tls') as ServerEntry;
    const link = shareLink(s);
    expect(link).toContain('path=%2Fa%20b%3Fc%26d%3D%C3%A9');
    expect(new URL(link).searchParams.get('path')).toBe('/a b?c&d=é');
  });

  it('an IPv6 address is bracketed and a name with # & ? survives in the fragment', () => {
    const s = vlessServers().find((x) => x.address === '2001:db8::10') as ServerEntry;
    const link = shareLink(s);
    expect(link).toContain('@[2001:db8::10]:443?');
    expect(link.split('#')).toHaveLength(2);
    expect(decodeURIComponent(new URL(link).hash.slice(1))).toBe('🇩🇪 Frankfurt · vless #1 & co?');
  });

  it('drops a vision flow where Xray does not run it (ws)', () => {
    const s = { ...(vlessServers().find((x) => x.name === 'vless ws tls') as ServerEntry), flow: 'xtls-rprx-vision' };
    expect(new URL(shareLink(s)).searchParams.has('flow')).toBe(false);
  });
});

describe('trojan:// links', () => {
  it.each(trojanServers().map((s) => [s.name, s] as const))('%s', (_name, s) => {
    const url = new URL(shareLink(s));
    expectUrlBasics(url, s, 'trojan:');
    expect(decodeURIComponent(url.username)).toBe(s.password);
    expect(url.searchParams.has('encryption')).toBe(false);
    expect(url.searchParams.has('flow')).toBe(false);
    expectStreamParams(s, url.searchParams);
  });

  it('a password with URL delimiters stays in the userinfo', () => {
    const s = trojanServers().find((x) => x.name === 'trojan tcp tls') as ServerEntry;
    const url = new URL(shareLink(s));
    expect(url.host).toBe('tcp.example.net:443');
    expect(decodeURIComponent(url.username)).toBe('p@ss:w/rd?#&=+ é');
  });
});

describe('vmess:// links (v2rayN JSON v2)', () => {
  it.each(vmessServers().map((s) => [s.name, s] as const))('%s', (_name, s) => {
    const link = shareLink(s);
    expect(link.startsWith('vmess://')).toBe(true);
    const body = link.slice('vmess://'.length);
    expect(body).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    const json = JSON.parse(Buffer.from(body, 'base64').toString('utf8')) as Record<string, unknown>;
    for (const [k, v] of Object.entries(json)) expect(typeof v, `${k} must be a string`).toBe('string');
    const { network, security } = s.stream;
    const t = s.stream.tls;
    expect(json).toMatchObject({
      v: '2',
      ps: s.name,
      add: s.address,
      port: String(s.port),
      id: s.uuid,
      aid: '0',
      scy: 'auto',
      net: network,
    });
    expect(json.tls).toBe(security === 'tls' ? 'tls' : '');
    expect(json.sni).toBe(security === 'tls' ? t?.sni : '');
    expect(json.alpn).toBe(security === 'tls' ? t?.alpn.join(',') : '');
    expect(json.fp).toBe(security === 'tls' ? t?.fingerprint : '');
    if (network === 'grpc')
      expect([json.path, json.type]).toEqual([s.stream.grpc?.service_name, s.stream.grpc?.multi_mode ? 'multi' : 'gun']);
    else expect(json.type).toBe('none');
    if (network === 'ws' || network === 'httpupgrade')
      expect([json.path, json.host]).toEqual([s.stream[network]?.path, s.stream[network]?.host]);
    if (network === 'tcp') expect([json.path, json.host]).toEqual(['', '']);
  });
});

describe('ss:// links (SIP002, plugin-less)', () => {
  const [classic, blake] = shadowsocksServers() as [ServerEntry, ServerEntry];

  it('a classic AEAD method: userinfo is base64url(method:password) without padding', () => {
    const url = new URL(shareLink(classic));
    expectUrlBasics(url, classic, 'ss:');
    expect(url.password).toBe('');
    expect(url.username).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(url.username, 'base64url').toString('utf8')).toBe(`${classic.method}:${classic.password}`);
  });

  it('a 2022-blake3 method: userinfo is percent-encoded method:password, not base64 (SIP022)', () => {
    const link = shareLink(blake);
    expect(link).toContain(
      'ss://2022-blake3-aes-128-gcm:Mz%2BVZX0VhBQeI%2FSx1KwTnA%3D%3D%3AcB%2B3qUXi%2FhYlbgvdsjOYFA%3D%3D@[2001:db8::30]:8389#',
    );
    const url = new URL(link);
    expectUrlBasics(url, blake, 'ss:');
    expect(decodeURIComponent(url.username)).toBe(blake.method);
    expect(decodeURIComponent(url.password)).toBe(blake.password);
  });

  it('Shadowsocks over anything but plain tcp is skipped, and shareLink says why', () => {
    const ws: ServerEntry = { ...classic, stream: { network: 'ws', security: 'none', ws: { path: '/', host: '' } } };
    const tls: ServerEntry = { ...classic, stream: { ...classic.stream, security: 'tls' } };
    for (const s of [ws, tls]) {
      expect(shareLinkSkipReason(s)).toMatch(/plain over tcp/);
      expect(() => shareLink(s)).toThrow(/plain over tcp/);
    }
    expect(shareLinks(doc([ws, classic, tls]))).toEqual([shareLink(classic)]);
  });
});

describe('the subscription body', () => {
  it('links keep document order; the base64 list decodes to them, newline-joined', () => {
    const servers = everyCombination();
    const links = shareLinks(doc(servers));
    expect(links).toHaveLength(servers.length);
    expect(links.map((l) => l.split('://')[0])).toEqual(
      servers.map((s) => ({ shadowsocks: 'ss' })[s.protocol as 'shadowsocks'] ?? s.protocol),
    );
    const body = base64List(doc(servers));
    expect(body).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(body, 'base64').toString('utf8').split('\n')).toEqual(links);
  });

  it('VMess with REALITY has no vmess:// form and is skipped', () => {
    const s: ServerEntry = {
      ...(vmessServers()[0] as ServerEntry),
      stream: {
        network: 'tcp',
        security: 'reality',
        reality: { sni: 'a.com', public_key: 'k', short_id: '', fingerprint: '', spider_x: '' },
      },
    };
    expect(shareLinkSkipReason(s)).toMatch(/REALITY/);
    expect(shareLinks(doc([s, ...vmessServers().slice(1, 2)]))).toHaveLength(1);
  });
});

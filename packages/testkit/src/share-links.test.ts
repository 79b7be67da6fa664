import { describe, expect, it } from 'vitest';
// Our renderer, by path: @svc/sub-formats depends on the testkit, so the testkit cannot depend on it.
import { base64List, shareLink } from '../../sub-formats/src/index.ts';
import type { ServerEntry, SubscriptionDocument } from '../../sub-formats/src/model.ts';
import { v2rayClientFromLink } from './share-link-client.ts';
import { decodeSubscriptionBody, parseShareLink } from './share-links.ts';
import { v2rayAvailable, v2rayTest } from './v2ray.ts';

const UUID = '2b1a6a7e-4f0e-4c3a-9d7b-3b5f0c1e2d4a';
const tls = (sni: string) => ({ sni, alpn: [], fingerprint: 'chrome', allow_insecure: false });

/** What GET /sub/{token} serves for each protocol/transport pair of the end-to-end tests, as our renderer links them. */
const SERVED: ServerEntry[] = [
  {
    name: 'node-1 · vmess tcp',
    protocol: 'vmess',
    address: '127.0.0.1',
    port: 20001,
    uuid: UUID,
    stream: { network: 'tcp', security: 'none' },
  },
  {
    name: 'node-1 · vmess ws',
    protocol: 'vmess',
    address: '127.0.0.1',
    port: 20002,
    uuid: UUID,
    stream: { network: 'ws', security: 'none', ws: { path: '/ws', host: '' } },
  },
  {
    name: 'node-1 · vless tcp',
    protocol: 'vless',
    address: '127.0.0.1',
    port: 20003,
    uuid: UUID,
    flow: '',
    stream: { network: 'tcp', security: 'none' },
  },
  {
    name: 'node-1 · trojan tls',
    protocol: 'trojan',
    address: '127.0.0.1',
    port: 20004,
    password: 'p@ss/word+1=#?',
    stream: { network: 'tcp', security: 'tls', tls: tls('localhost') },
  },
  {
    name: 'node-1 · ss',
    protocol: 'shadowsocks',
    address: '127.0.0.1',
    port: 20005,
    method: 'aes-128-gcm',
    password: 'c2VjcmV0/+=',
    stream: { network: 'tcp', security: 'none' },
  },
];

describe('parseShareLink reads what our renderer writes, as an app would', () => {
  it('vmess over tcp: address, port, uuid, no transport, no tls', () => {
    expect(parseShareLink(shareLink(SERVED[0] as ServerEntry))).toMatchObject({
      protocol: 'vmess',
      name: 'node-1 · vmess tcp',
      address: '127.0.0.1',
      port: 20001,
      id: UUID,
      method: 'auto',
      network: 'tcp',
      security: 'none',
      headerType: 'none',
    });
  });

  it('vmess over ws: the path and the Host the server expects', () => {
    const withHost = {
      ...(SERVED[1] as ServerEntry),
      stream: { network: 'ws' as const, security: 'none' as const, ws: { path: '/ws', host: 'cdn.example.com' } },
    };
    expect(parseShareLink(shareLink(SERVED[1] as ServerEntry))).toMatchObject({ network: 'ws', path: '/ws', host: '' });
    expect(parseShareLink(shareLink(withHost))).toMatchObject({ network: 'ws', path: '/ws', host: 'cdn.example.com' });
  });

  it('vless over tcp: the uuid, no flow, security none', () => {
    expect(parseShareLink(shareLink(SERVED[2] as ServerEntry))).toMatchObject({
      protocol: 'vless',
      id: UUID,
      flow: '',
      network: 'tcp',
      security: 'none',
      address: '127.0.0.1',
      port: 20003,
    });
  });

  it('trojan over tls: a password with reserved characters comes back whole, with the SNI', () => {
    expect(parseShareLink(shareLink(SERVED[3] as ServerEntry))).toMatchObject({
      protocol: 'trojan',
      password: 'p@ss/word+1=#?',
      security: 'tls',
      sni: 'localhost',
      fingerprint: 'chrome',
      allowInsecure: false,
    });
  });

  it('shadowsocks (SIP002, base64url userinfo): method and a password with base64 characters', () => {
    expect(parseShareLink(shareLink(SERVED[4] as ServerEntry))).toMatchObject({
      protocol: 'shadowsocks',
      method: 'aes-128-gcm',
      password: 'c2VjcmV0/+=',
      address: '127.0.0.1',
      port: 20005,
    });
  });

  it('shadowsocks 2022 (percent-encoded userinfo) and an IPv6 server address', () => {
    const ss2022: ServerEntry = {
      name: 'v6 · ss2022',
      protocol: 'shadowsocks',
      address: '2001:db8::1',
      port: 443,
      method: '2022-blake3-aes-128-gcm',
      password: 'AAAAAAAAAAAAAAAAAAAAAA==:BBBBBBBBBBBBBBBBBBBBBB==',
      stream: { network: 'tcp', security: 'none' },
    };
    expect(parseShareLink(shareLink(ss2022))).toMatchObject({
      address: '2001:db8::1',
      port: 443,
      method: '2022-blake3-aes-128-gcm',
      password: 'AAAAAAAAAAAAAAAAAAAAAA==:BBBBBBBBBBBBBBBBBBBBBB==',
      name: 'v6 · ss2022',
    });
  });

  it('the base64 subscription body decodes to one link per served entry, in order', () => {
    const doc: SubscriptionDocument = {
      title: 't',
      status: 'active',
      upload_bytes: 0,
      download_bytes: 0,
      total_bytes: null,
      expires_at: null,
      servers: SERVED,
    };
    const links = decodeSubscriptionBody(base64List(doc));
    expect(links.map((l) => parseShareLink(l).name)).toEqual(SERVED.map((s) => s.name));
  });
});

describe('parseShareLink reads the forms other panels write', () => {
  it('the legacy whole-base64 ss:// form', () => {
    const link = `ss://${Buffer.from('chacha20-ietf-poly1305:pw:with:colons@example.com:8388').toString('base64')}#legacy`;
    expect(parseShareLink(link)).toMatchObject({
      method: 'chacha20-ietf-poly1305',
      password: 'pw:with:colons',
      address: 'example.com',
      port: 8388,
      name: 'legacy',
    });
  });

  it('vmess JSON with numbers for port and aid; trojan without a security parameter is tls', () => {
    const vmess = `vmess://${Buffer.from(JSON.stringify({ v: 2, ps: 'n', add: 'h.example', port: 443, id: UUID, aid: 0, net: 'ws', path: '/p', tls: 'tls', sni: 's.example' })).toString('base64')}`;
    expect(parseShareLink(vmess)).toMatchObject({ port: 443, network: 'ws', path: '/p', security: 'tls', sni: 's.example' });
    expect(parseShareLink('trojan://pw@h.example:443#t')).toMatchObject({ security: 'tls', network: 'tcp', password: 'pw' });
  });

  it('what is no share link is refused, naming the problem', () => {
    expect(() => parseShareLink('http://example.com')).toThrow(/not a share link/);
    expect(() => parseShareLink('vmess://%%%')).toThrow(/not a v2rayN vmess link/);
    expect(() => parseShareLink('vless://@h:1')).toThrow(/no uuid/);
    expect(() => parseShareLink('ss://YWVzLTEyOC1nY206cHc@h:99999')).toThrow(/bad port/);
  });
});

const v2ray = v2rayAvailable();
if (!v2ray.available) console.warn(`share-links: v2ray -test cases skipped: ${v2ray.reason}`);

describe.skipIf(!v2ray.available)('v2rayClientFromLink: v2ray 4 loads the client built from each served link', () => {
  it.each(SERVED.map((s) => [s.name, s] as const))('%s', async (_name, served) => {
    const config = v2rayClientFromLink(parseShareLink(shareLink(served)), { httpProxyPort: 18080, allowInsecure: true });
    const verdict = await v2rayTest(config, `client-${served.protocol}`);
    expect(verdict.code, verdict.output).toBe(0);
  });

  it('what v2ray 4 cannot dial is refused with the reason instead of a different config', () => {
    const grpc = `vless://${UUID}@h.example:443?type=grpc&security=tls&serviceName=s#g`;
    const reality = `vless://${UUID}@h.example:443?type=tcp&security=reality&pbk=k&sni=s.example#r`;
    const vision = `vless://${UUID}@h.example:443?type=tcp&security=tls&flow=xtls-rprx-vision#v`;
    expect(() => v2rayClientFromLink(parseShareLink(grpc), { httpProxyPort: 1 })).toThrow(/network grpc/);
    expect(() => v2rayClientFromLink(parseShareLink(reality), { httpProxyPort: 1 })).toThrow(/reality security/);
    expect(() => v2rayClientFromLink(parseShareLink(vision), { httpProxyPort: 1 })).toThrow(/VLESS flow xtls-rprx-vision/);
  });
});

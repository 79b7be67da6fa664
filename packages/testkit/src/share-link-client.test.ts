import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// Our renderer, by path: @svc/sub-formats depends on the testkit, so the testkit cannot depend on it.
import { shareLink } from '../../sub-formats/src/index.ts';
import type { ServerEntry } from '../../sub-formats/src/model.ts';
import { selfSignedCertificate } from './certificates.ts';
import { type EngineProcess, freePort, startV2ray } from './engine-process.ts';
import { type EchoServer, httpGetThroughProxy, startEchoServer } from './http-through-proxy.ts';
import { v2rayClientFromLink } from './share-link-client.ts';
import { parseShareLink } from './share-links.ts';
import { v2rayAvailable } from './v2ray.ts';

/**
 * The client built from a link carries traffic: a v2ray 4 server configured by hand here (not
 * by packages/xray-config) with an inbound per pair, a v2ray client per link, and an HTTP GET
 * through each to a local server. What the end-to-end tests do with the agent's engine instead.
 */

const v2ray = v2rayAvailable();
if (!v2ray.available) console.warn(`share-link-client: traffic cases skipped: ${v2ray.reason}`);

const UUID = '6f1d2c3b-8a9e-4b7c-9d0e-1f2a3b4c5d6e';
const TROJAN_PASSWORD = 'trojan-password-1';
const SS_PASSWORD = 'ss-password-1';

interface Pair {
  name: string;
  entry: Omit<ServerEntry, 'port'>;
  inbound: Record<string, unknown>;
}

function pairs(tls: { cert_pem: string; key_pem: string }): Pair[] {
  const lines = (pem: string) => pem.trim().split('\n');
  const base = { address: '127.0.0.1' };
  return [
    {
      name: 'vmess tcp',
      entry: { ...base, name: 'vmess tcp', protocol: 'vmess', uuid: UUID, stream: { network: 'tcp', security: 'none' } },
      inbound: { protocol: 'vmess', settings: { clients: [{ id: UUID, alterId: 0 }] } },
    },
    {
      name: 'vmess ws',
      entry: {
        ...base,
        name: 'vmess ws',
        protocol: 'vmess',
        uuid: UUID,
        stream: { network: 'ws', security: 'none', ws: { path: '/ws', host: '' } },
      },
      inbound: {
        protocol: 'vmess',
        settings: { clients: [{ id: UUID, alterId: 0 }] },
        streamSettings: { network: 'ws', wsSettings: { path: '/ws' } },
      },
    },
    {
      name: 'vless tcp',
      entry: { ...base, name: 'vless tcp', protocol: 'vless', uuid: UUID, flow: '', stream: { network: 'tcp', security: 'none' } },
      inbound: { protocol: 'vless', settings: { clients: [{ id: UUID }], decryption: 'none' } },
    },
    {
      name: 'trojan tls',
      entry: {
        ...base,
        name: 'trojan tls',
        protocol: 'trojan',
        password: TROJAN_PASSWORD,
        stream: { network: 'tcp', security: 'tls', tls: { sni: 'localhost', alpn: [], fingerprint: 'chrome', allow_insecure: false } },
      },
      inbound: {
        protocol: 'trojan',
        settings: { clients: [{ password: TROJAN_PASSWORD }] },
        streamSettings: {
          network: 'tcp',
          security: 'tls',
          tlsSettings: { certificates: [{ certificate: lines(tls.cert_pem), key: lines(tls.key_pem) }] },
        },
      },
    },
    {
      name: 'shadowsocks aes-128-gcm',
      entry: {
        ...base,
        name: 'ss',
        protocol: 'shadowsocks',
        method: 'aes-128-gcm',
        password: SS_PASSWORD,
        stream: { network: 'tcp', security: 'none' },
      },
      inbound: { protocol: 'shadowsocks', settings: { method: 'aes-128-gcm', password: SS_PASSWORD, network: 'tcp' } },
    },
  ];
}

let server: EngineProcess | undefined;
let echo: EchoServer;
const links: Array<{ name: string; link: string }> = [];

beforeAll(async () => {
  if (!v2ray.available) return;
  echo = await startEchoServer();
  const inbounds: Record<string, unknown>[] = [];
  for (const p of pairs(selfSignedCertificate({ cn: 'localhost' }))) {
    const port = await freePort();
    inbounds.push({ ...p.inbound, listen: '127.0.0.1', port });
    links.push({ name: p.name, link: shareLink({ ...p.entry, port } as ServerEntry) });
  }
  server = await startV2ray(
    { log: { loglevel: 'warning' }, inbounds, outbounds: [{ protocol: 'freedom', settings: {} }] },
    { waitForPorts: inbounds.map((i) => i.port as number) },
  );
});
afterAll(async () => {
  await server?.kill();
  await echo?.close();
});

describe.skipIf(!v2ray.available)('a v2ray 4 client built from a share link carries HTTP to the server behind it', () => {
  it.each(['vmess tcp', 'vmess ws', 'vless tcp', 'trojan tls', 'shadowsocks aes-128-gcm'])('%s', async (name) => {
    const { link } = links.find((l) => l.name === name) as { link: string };
    const httpProxyPort = await freePort();
    // allowInsecure: the server's certificate is self-signed, as the end-to-end tests' is.
    const client = await startV2ray(v2rayClientFromLink(parseShareLink(link), { httpProxyPort, allowInsecure: true }), {
      waitForPorts: [httpProxyPort],
    });
    try {
      const res = await httpGetThroughProxy(httpProxyPort, `${echo.url}/bytes/200000`);
      expect(res.status, client.lines.join('\n')).toBe(200);
      expect(res.bytes).toBe(200_000);
    } finally {
      await client.kill();
    }
  });

  it('the Trojan client without allowInsecure refuses the self-signed certificate', async () => {
    const { link } = links.find((l) => l.name === 'trojan tls') as { link: string };
    const httpProxyPort = await freePort();
    const client = await startV2ray(v2rayClientFromLink(parseShareLink(link), { httpProxyPort }), { waitForPorts: [httpProxyPort] });
    try {
      const res = await httpGetThroughProxy(httpProxyPort, `${echo.url}/bytes/10`).catch((err: Error) => ({ status: 0, bytes: 0, err }));
      expect(res.bytes).toBe(0);
      expect(res.status).not.toBe(200);
    } finally {
      await client.kill();
    }
  });
});

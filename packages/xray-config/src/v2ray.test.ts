import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Inbound, type InboundUser, Network, NodeConfig, type Outbound, Protocol, SecurityT, type StreamSettings } from '@svc/proto';
import { selfSignedCertificate } from '@svc/testkit/certificates';
import { peerMissing } from '@svc/testkit/peers';
import { v2rayAvailable, v2rayTest } from '@svc/testkit/v2ray';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CERT_ID,
  chainNodes,
  inbound,
  nodeConfig,
  plainTcp,
  sniffing,
  ssUser,
  tls,
  toDirect,
  torrentToBlock,
  trojanUser,
  UUID,
  vlessUser,
  vmessUser,
} from '../test/fixtures.ts';
import { type CertificateFiles, renderXrayConfig } from './index.ts';

/**
 * The subset Xray shares with v2ray, checked by an independent implementation: Debian's `v2ray`
 * (v4: `v2ray -test -config f.json`; v5: `v2ray test -c f.json`) loads every rendered config,
 * reads the certificate files, and must answer exit 0. Every protocol (vless, vmess, trojan,
 * shadowsocks with a classic AEAD method) over tcp and ws, with and without TLS; then combined
 * configs with the stats API and chain outbounds. Xray-only parts (REALITY, XHTTP,
 * HTTPUpgrade, gRPC, the vision flow, Shadowsocks 2022 and multi-user Shadowsocks, `quic`
 * sniffing) are pinned by the golden files in render.test.ts instead.
 */
const v2ray = v2rayAvailable();
const openssl = spawnSync('openssl', ['version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const unavailable = !v2ray.available ? v2ray.reason : openssl.error ? `openssl not runnable (${openssl.error.message})` : null;
if (openssl.error) peerMissing('openssl', openssl.error.message);
if (unavailable) console.warn(`v2ray config tests skipped: ${unavailable}`);
else if (v2ray.available) console.info(`v2ray config tests with ${v2ray.version}`);

let dir: string;
let certificatePaths: (id: string) => CertificateFiles;

beforeAll(async () => {
  if (unavailable) return;
  dir = await mkdtemp(join(tmpdir(), 'xray-config-v2ray-'));
  const certDir = join(dir, 'certs', CERT_ID);
  await mkdir(certDir, { recursive: true });
  const { cert_pem, key_pem } = selfSignedCertificate({ cn: 'edge.example.com' });
  await writeFile(join(certDir, 'fullchain.pem'), cert_pem);
  await writeFile(join(certDir, 'privkey.pem'), key_pem);
  certificatePaths = (id) => ({ certFile: join(dir, 'certs', id, 'fullchain.pem'), keyFile: join(dir, 'certs', id, 'privkey.pem') });
}, 60_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

let validations = 0;
afterAll(() => {
  if (!unavailable) console.info(`v2ray accepted ${validations} rendered configs`);
});

/** v2ray's config test of the rendered config: its exit code and output. */
function renderedTest(name: string, config: NodeConfig, opts: { apiPort?: number; certificatePaths?: typeof certificatePaths } = {}) {
  const json = renderXrayConfig(config, { certificatePaths: opts.certificatePaths ?? certificatePaths, apiPort: opts.apiPort });
  return v2rayTest(json, name);
}

async function accepted(name: string, config: NodeConfig, opts: { apiPort?: number } = {}) {
  const { code, output } = await renderedTest(name, config, opts);
  expect(code, `v2ray rejected ${name}.json:\n${output}`).toBe(0);
  validations++;
}

/** v2ray knows no `quic` sniffing (Xray does): drop it to check the rest of a config. */
function withoutQuic(config: NodeConfig): NodeConfig {
  const copy = NodeConfig.fromJSON(NodeConfig.toJSON(config));
  for (const i of copy.xray?.inbounds ?? []) if (i.sniffing) i.sniffing.destOverride = i.sniffing.destOverride.filter((d) => d !== 'quic');
  return copy;
}

const PROTOCOLS = ['vless', 'vmess', 'trojan', 'shadowsocks'] as const;
const NETWORKS = ['tcp', 'ws'] as const;
const SECURITIES = ['none', 'tls'] as const;
const SS_METHOD: Record<string, string> = { tcp: 'chacha20-ietf-poly1305', ws: 'aes-256-gcm' };

function sharedInbound(
  protocol: (typeof PROTOCOLS)[number],
  network: (typeof NETWORKS)[number],
  security: (typeof SECURITIES)[number],
  port: number,
) {
  const stream: StreamSettings =
    network === 'tcp'
      ? { network: Network.TCP, security: SecurityT.NONE, tcp: { acceptProxyProtocol: port % 2 === 0 } }
      : { network: Network.WS, security: SecurityT.NONE, ws: { path: `/${protocol}`, headers: { Host: 'cdn.example.com' } } };
  if (security === 'tls') Object.assign(stream, tls(network === 'ws' ? 'http/1.1' : 'h2,http/1.1'));
  const users: Record<string, InboundUser[]> = {
    vless: [vlessUser(1), vlessUser(2)],
    vmess: [vmessUser(1), vmessUser(2)],
    trojan: [trojanUser(1), trojanUser(2)],
    // One user: v2ray has no multi-user Shadowsocks (the renderer's single-user layout).
    shadowsocks: [ssUser(1, SS_METHOD[network] as string, 'a-long-shadowsocks-password')],
  };
  const proto = { vless: Protocol.VLESS, vmess: Protocol.VMESS, trojan: Protocol.TROJAN, shadowsocks: Protocol.SHADOWSOCKS }[protocol];
  return inbound({
    tag: `${protocol}-${network}-${security}`,
    protocol: proto,
    port,
    listen: port % 3 === 0 ? '127.0.0.1' : '',
    stream,
    sniffing: sniffing({ destOverride: ['http', 'tls'], routeOnly: port % 2 === 1 }),
    users: users[protocol] as InboundUser[],
  });
}

const MATRIX = PROTOCOLS.flatMap((p) => NETWORKS.flatMap((n) => SECURITIES.map((s) => [p, n, s] as const)));

describe('v2ray accepts the rendered shared subset', () => {
  it.skipIf(unavailable).each(MATRIX)('%s over %s, security %s', async (protocol, network, security) => {
    const i = sharedInbound(protocol, network, security, 20000);
    await accepted(`${protocol}-${network}-${security}`, nodeConfig([i], { rules: [torrentToBlock(i.tag), toDirect(i.tag)] }));
  });

  it.skipIf(unavailable)(
    'all of them on one node, with the stats API and chain outbounds (shadowsocks, vless, trojan next hops)',
    async () => {
      const inbounds: Inbound[] = MATRIX.map(([p, n, s], k) => sharedInbound(p, n, s, 21000 + k));
      const outbounds: Outbound[] = [
        {
          tag: 'chain-out-ss',
          protocol: Protocol.SHADOWSOCKS,
          address: 'hop.example.net',
          port: 30002,
          shadowsocks: { method: 'chacha20-ietf-poly1305', password: 'secret-hop2' },
          stream: plainTcp(),
        },
        {
          tag: 'chain-out-vless',
          protocol: Protocol.VLESS,
          address: '2001:db8::7',
          port: 443,
          vless: { id: UUID[0], flow: '' },
          stream: { network: Network.WS, ws: { path: '/v', headers: {} }, ...tls('http/1.1') },
        },
        {
          tag: 'chain-out-trojan',
          protocol: Protocol.TROJAN,
          address: '203.0.113.9',
          port: 8443,
          trojan: { password: 'hop-password' },
          stream: { network: Network.TCP, tcp: { acceptProxyProtocol: false }, ...tls() },
        },
      ];
      const rules = [
        ...inbounds.map((i) => torrentToBlock(i.tag)),
        { inboundTag: 'vless-tcp-tls', outboundTag: 'chain-out-ss', protocols: [] },
        { inboundTag: 'vmess-ws-tls', outboundTag: 'chain-out-vless', protocols: [] },
        { inboundTag: 'trojan-tcp-tls', outboundTag: 'chain-out-trojan', protocols: [] },
        ...inbounds.map((i) => toDirect(i.tag)),
      ];
      await accepted('combined', nodeConfig(inbounds, { outbounds, rules }), { apiPort: 10085 });
    },
  );

  it.skipIf(unavailable).each(['entry', 'middle', 'exit'] as const)('chain fixture, %s hop (quic sniffing dropped)', async (hop) => {
    await accepted(`chain-${hop}`, withoutQuic(chainNodes()[hop]), { apiPort: 10085 });
  });

  const compilerGolden = join(import.meta.dirname, '..', '..', 'desired-state', 'test', 'golden');
  const chainGoldens = existsSync(compilerGolden) ? readdirSync(compilerGolden).filter((f) => /^chain-.*\.json$/.test(f)) : [];
  it.skipIf(unavailable || chainGoldens.length === 0).each(chainGoldens)(
    "the compiler's golden %s (packages/desired-state; quic sniffing dropped)",
    async (f) => {
      const config = NodeConfig.fromJSON(JSON.parse(readFileSync(join(compilerGolden, f), 'utf8')));
      await accepted(`compiler-${f.replace(/\.json$/, '')}`, withoutQuic(config), { apiPort: 10085 });
    },
  );

  it.skipIf(unavailable)('control: v2ray does reject a config (a TLS certificate file that does not exist)', async () => {
    const i = sharedInbound('vless', 'tcp', 'tls', 20000);
    const { code, output } = await renderedTest('control', nodeConfig([i]), {
      certificatePaths: (id) => ({ certFile: join(dir, 'missing', `${id}.pem`), keyFile: join(dir, 'missing', `${id}.key`) }),
    });
    expect(code).not.toBe(0);
    expect(output).toMatch(/certificate|no such file/i);
  });
});

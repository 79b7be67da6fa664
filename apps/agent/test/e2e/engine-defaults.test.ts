import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DesiredState } from '@svc/proto';
import { type ControlPlane, fleetOverRest, startControlPlane, v2rayAvailable, v2rayTest } from '@svc/testkit';
import { AgentSimulator } from '@svc/testkit/agent-simulator';
import { freePort, startV2ray } from '@svc/testkit/engine-process';
import { renderXrayConfig } from '@svc/xray-config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Issue 28.2: the defaults work on every engine we support. Profiles made through the admin API
 * with nothing but what each needs (default sniffing: http, tls, quic), one inbound of every
 * kind Debian's v2ray 4.34 runs (VLESS, VMess, Trojan over tcp and ws, with and without TLS;
 * Shadowsocks with each classic AEAD method), plus route-only sniffing, a bittorrent block and a
 * Shadowsocks inbound nobody may use yet. An agent that reports V2Ray 4.34.0 in Hello receives
 * the DesiredState the gateway compiles over real gRPC and TLS; it is rendered with
 * @svc/xray-config as svc-agent renders it (certificate files, the stats API) and Debian's v2ray
 * must accept it (`v2ray -test`) and start on it, every inbound listening. The same node's agent
 * reporting Xray gets quic back, in a new revision.
 */
const v2ray = v2rayAvailable();
const skipReason = v2ray.available ? null : v2ray.reason;
if (skipReason) console.warn(`engine defaults test skipped: ${skipReason}`);

type Api = ControlPlane['api'];

const KINDS = [
  ...(['vless', 'vmess', 'trojan'] as const).flatMap((protocol) =>
    (['tcp', 'ws'] as const).flatMap((network) => (['none', 'tls'] as const).map((security) => ({ protocol, network, security }))),
  ),
  ...(['aes-128-gcm', 'aes-256-gcm', 'chacha20-ietf-poly1305'] as const).map((method) => ({
    protocol: 'shadowsocks' as const,
    network: 'tcp' as const,
    security: 'none' as const,
    method,
  })),
];

let cp: ControlPlane;
let dir: string;
let nodeId: string;
let agent: AgentSimulator;
/** Tag -> port of the inbounds the subscription is granted. */
const served = new Map<string, number>();
let emptyShadowsocksTag: string;

async function post(api: Api, path: string, body: unknown) {
  const res = await api.post(path, body);
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.text}`);
  return res.body;
}

beforeAll(async () => {
  if (skipReason) return;
  dir = await mkdtemp(join(tmpdir(), 'svc-engine-defaults-'));
  cp = await startControlPlane();
  const api = cp.api;
  const node = await fleetOverRest.createNode(api, { address: '127.0.0.1' });
  nodeId = node.id;
  const certificate = await fleetOverRest.uploadCertificate(api);
  const inbounds: string[] = [];
  const inbound = async (profile: Record<string, unknown>) => {
    const created = await post(api, '/api/v1/inbound-profiles', { name: `p-${Math.random().toString(36).slice(2)}`, ...profile });
    const port = await freePort();
    const made = await post(api, '/api/v1/inbounds', { node_id: node.id, profile_id: created.id, port });
    return { id: made.id as string, tag: made.tag as string, port };
  };
  for (const k of KINDS) {
    const stream =
      k.security === 'tls'
        ? { network: k.network, security: 'tls', tls: { certificate_id: certificate.id, server_names: ['localhost'] } }
        : { network: k.network, security: 'none' };
    const made = await inbound({ protocol: k.protocol, stream, ...('method' in k ? { shadowsocks_method: k.method } : {}) });
    inbounds.push(made.id);
    served.set(made.tag, made.port);
  }
  // Route-only sniffing, bittorrent blocked (and asked for as a destination, which no engine overrides with).
  for (const sniffing of [{ route_only: true }, { dest_override: ['http', 'tls', 'quic', 'bittorrent'] }]) {
    const made = await inbound({ protocol: 'vmess', stream: { network: 'tcp', security: 'none' }, sniffing, block_bittorrent: true });
    inbounds.push(made.id);
    served.set(made.tag, made.port);
  }
  // Granted to nobody: no user, which v2ray refuses for Shadowsocks.
  emptyShadowsocksTag = (
    await inbound({ protocol: 'shadowsocks', stream: { network: 'tcp', security: 'none' }, shadowsocks_method: 'aes-128-gcm' })
  ).tag;
  const group = await fleetOverRest.createAccessGroup(api, inbounds);
  const client = await fleetOverRest.createClient(api);
  await fleetOverRest.createSubscription(api, { clientId: client.id, accessGroupIds: [group.id] });
  const token = await fleetOverRest.issueEnrollToken(api, node.id);
  agent = await AgentSimulator.enroll({
    endpoint: token.grpc_endpoint,
    caCertPem: token.ca_cert_pem,
    token: token.token,
    xrayVersion: '4.34.0',
  });
}, 120_000);

afterAll(async () => {
  await agent?.disconnect();
  await cp?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The JSON svc-agent would write for this state: certificate files laid out, the stats API on `apiPort`. */
async function rendered(state: DesiredState, apiPort: number) {
  const config = state.config;
  if (!config) throw new Error('a DesiredState without config');
  const certDir = join(dir, `rev-${state.revision}`);
  for (const c of config.certificates) {
    await mkdir(join(certDir, c.id), { recursive: true });
    await writeFile(join(certDir, c.id, 'fullchain.pem'), c.certPem);
    await writeFile(join(certDir, c.id, 'privkey.pem'), c.keyPem);
  }
  return renderXrayConfig(config, {
    certificatePaths: (id) => ({ certFile: join(certDir, id, 'fullchain.pem'), keyFile: join(certDir, id, 'privkey.pem') }),
    apiPort,
  });
}

const latest = () => agent.desiredStates.at(-1) as DesiredState;

describe.skipIf(skipReason)(
  'the defaults run on Debian’s v2ray 4.34 (the desired state is compiled for the engine the agent reports)',
  () => {
    it('an agent reporting V2Ray 4.34.0 is sent a DesiredState v2ray accepts (v2ray -test) and starts on, every served inbound listening', async () => {
      agent.connect();
      const node = (await cp.api.get(`/api/v1/nodes/${nodeId}`)).body;
      await agent.waitForRevision(BigInt(node.desired_revision), 20_000);
      const state = latest();
      const inbounds = state.config?.xray?.inbounds ?? [];
      expect(inbounds.map((i) => i.tag).sort()).toEqual([...served.keys()].sort());
      for (const i of inbounds)
        expect(
          i.sniffing?.destOverride.every((d) => d === 'http' || d === 'tls'),
          i.tag,
        ).toBe(true);

      const apiPort = await freePort();
      const json = await rendered(state, apiPort);
      const verdict = await v2rayTest(json, 'engine-defaults');
      expect(verdict.code, verdict.output).toBe(0);
      const engine = await startV2ray(json, { waitForPorts: [...served.values(), apiPort], name: 'engine-defaults' });
      try {
        expect(engine.child.exitCode).toBeNull();
      } finally {
        await engine.stop();
      }
      await agent.waitFor(() => agent.appliedRevision === state.revision, 10_000, 'the apply recorded');
      const view = (await cp.api.get(`/api/v1/nodes/${nodeId}`)).body;
      expect(view).toMatchObject({
        xray_version: '4.34.0',
        engine: { family: 'v2ray', sniffing: ['http', 'tls'] },
        last_apply_error: null,
      });
    });

    it('the same node’s agent reporting Xray afterwards is sent a new revision with quic sniffing and the empty Shadowsocks inbound', async () => {
      const before = latest().revision;
      await agent.disconnect();
      agent.opts.xrayVersion = '25.10.15';
      agent.connect();
      await agent.waitForRevision(before + 1n, 20_000);
      const inbounds = latest().config?.xray?.inbounds ?? [];
      expect(inbounds.map((i) => i.tag)).toContain(emptyShadowsocksTag);
      expect(inbounds.find((i) => i.tag === emptyShadowsocksTag)?.sniffing?.destOverride).toEqual(['http', 'tls', 'quic']);
      expect((await cp.api.get(`/api/v1/nodes/${nodeId}`)).body.engine).toMatchObject({ family: 'xray', version: '25.10.15' });
    });
  },
);

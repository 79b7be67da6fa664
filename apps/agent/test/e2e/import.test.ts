import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AppProcess,
  type ControlPlane,
  decodeSubscriptionBody,
  fetchSubscription,
  fleetOverRest,
  httpGetThroughProxy,
  issueEnrollToken,
  parseShareLink,
  type ShareLink,
  spawnApp,
  startControlPlane,
} from '@svc/testkit';
import { freePort } from '@svc/testkit/engine-process';
import { marzbanStore } from '@svc/testkit/marzban-store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentEnv, type CountingServer, clientFor, enrollAgent, eventually, killEngine, skipReason, startCountingServer } from './loop.ts';

/**
 * Issue 34 item 3, the proof that customers notice nothing: a Marzban store (one user with a
 * VMess, VLESS, Trojan and Shadowsocks credential) and its xray_config.json are uploaded to a
 * running control plane (POST /api/v1/imports, the worker's job), which binds the source's
 * inbounds on a node at their ports; the agent enrolls and serves them through Debian's v2ray;
 * the user's OLD Marzban link answers share links holding the credentials Marzban gave them, and
 * a client built from each link carries traffic.
 */
if (skipReason) console.warn(`import end-to-end test skipped: ${skipReason}`);

const AGENT = 'apps/agent/src/main.ts';

/** A token as Marzban 0.8 mints it (base64url "username,unix time", then 10 characters of SHA-256 of that and the secret): the old link. */
const marzbanToken = (secret: string, username: string, at: Date) => {
  const payload = Buffer.from(`${username},${Math.floor(at.getTime() / 1000)}`).toString('base64url');
  return (
    payload +
    createHash('sha256')
      .update(payload + secret)
      .digest('base64url')
      .slice(0, 10)
  );
};
const SECRET = randomBytes(32).toString('hex');
const CREDS = {
  vmess: randomUUID(),
  vless: randomUUID(),
  trojan: 'alice-trojan-password-from-marzban',
  shadowsocks: 'alice-shadowsocks-password-from-marzban',
};
let cp: ControlPlane;
let agent: AppProcess | undefined;
let stateDir: string;
let dest: CountingServer;
let links: ShareLink[] = [];
let report: Record<string, any>;

beforeAll(async () => {
  if (skipReason) return;
  dest = await startCountingServer();
  cp = await startControlPlane();
  stateDir = await mkdtemp(join(tmpdir(), 'svc-agent-import-'));
  const node = await fleetOverRest.createNode(cp.api, { address: '127.0.0.1' });
  const cert = await fleetOverRest.uploadCertificate(cp.api);
  const ports = { vmess: await freePort(), vless: await freePort(), trojan: await freePort(), ss: await freePort() };
  const xrayConfig = JSON.stringify({
    inbounds: [
      { tag: 'API_INBOUND', listen: '127.0.0.1', port: 62789, protocol: 'dokodemo-door', settings: { address: '127.0.0.1' } },
      { tag: 'VMess TCP', port: ports.vmess, protocol: 'vmess', settings: { clients: [] }, streamSettings: { network: 'tcp' } },
      {
        tag: 'VLESS TCP',
        port: ports.vless,
        protocol: 'vless',
        settings: { clients: [], decryption: 'none' },
        streamSettings: { network: 'tcp' },
      },
      {
        tag: 'Trojan TLS',
        port: ports.trojan,
        protocol: 'trojan',
        settings: { clients: [] },
        streamSettings: {
          network: 'tcp',
          security: 'tls',
          tlsSettings: {
            serverName: 'localhost',
            certificates: [{ certificateFile: '/var/lib/marzban/certs/fullchain.pem', keyFile: '/var/lib/marzban/certs/key.pem' }],
          },
        },
      },
      { tag: 'Shadowsocks TCP', port: ports.ss, protocol: 'shadowsocks', settings: { clients: [], network: 'tcp,udp' } },
    ],
    outbounds: [{ protocol: 'freedom', tag: 'DIRECT' }],
  });
  const database = await marzbanStore({
    secret: SECRET,
    users: [
      {
        username: 'alice',
        data_limit: 10 * 1024 ** 3,
        proxies: [
          { type: 'VMess', settings: { id: CREDS.vmess } },
          { type: 'VLESS', settings: { id: CREDS.vless, flow: '' } },
          { type: 'Trojan', settings: { password: CREDS.trojan } },
          { type: 'Shadowsocks', settings: { password: CREDS.shadowsocks, method: 'aes-256-gcm' } },
        ],
      },
    ],
  });
  const form = new FormData();
  form.append('file', new Blob([database]), 'db.sqlite3');
  form.append('xray_config', new Blob([xrayConfig]), 'xray_config.json');
  form.append('options', JSON.stringify({ from: 'marzban', nodes: [node.id], tls_certificate_id: cert.id }));
  const res = await fetch(`${cp.http}/api/v1/imports`, {
    method: 'POST',
    body: form,
    headers: { authorization: `Bearer ${await cp.api.token()}` },
  });
  expect(res.status, await res.clone().text()).toBe(202);
  const { id } = (await res.json()) as { id: string };
  const job = await eventually(async () => {
    const j = (await cp.api.get(`/api/v1/imports/${id}`)).body;
    return j.status === 'done' || j.status === 'failed' ? j : undefined;
  }, 'the import job ended');
  expect(job.error).toBeNull();
  report = job.report;

  await enrollAgent(AGENT, stateDir, await issueEnrollToken(cp.api, node.id));
  agent = spawnApp(AGENT, agentEnv(stateDir), ['run']);
  await eventually(
    async () => {
      const n = (await cp.api.get(`/api/v1/nodes/${node.id}`)).body;
      return n.connectivity === 'online' && n.applied_revision >= n.desired_revision && n.applied_revision > 0 ? n : undefined;
    },
    'the node applied',
    60_000,
  );

  const token = marzbanToken(SECRET, 'alice', new Date('2025-06-01T00:00:00Z'));
  const { body } = await fetchSubscription(`${cp.http}/sub/${token}`);
  links = decodeSubscriptionBody(body).map(parseShareLink);
}, 180_000);

afterAll(async () => {
  await agent?.stop();
  if (stateDir) {
    await killEngine(stateDir).catch(() => {});
    await rm(stateDir, { recursive: true, force: true });
  }
  await cp?.stop();
  await dest?.close();
});

const linkOf = (protocol: ShareLink['protocol']) => {
  const found = links.filter((l) => l.protocol === protocol);
  expect(found, `one ${protocol} link in ${JSON.stringify(links.map((l) => l.name))}`).toHaveLength(1);
  return found[0] as ShareLink;
};

describe.skipIf(skipReason)(
  "after the import, the old Marzban link's share links carry traffic through our node (real agent, real engine)",
  () => {
    it('the import bound the four source inbounds on the node, each in its profile and group', () => {
      expect(report.counts).toMatchObject({ users_created: 1, inbound_profiles_created: 4, inbounds_created: 4 });
      expect(report.not_carried).toEqual([]);
    });

    it('the old link answers share links with the credentials Marzban gave the user', () => {
      expect(linkOf('vmess').id).toBe(CREDS.vmess);
      expect(linkOf('vless').id).toBe(CREDS.vless);
      expect(linkOf('trojan').password).toBe(CREDS.trojan);
      expect(linkOf('shadowsocks').password).toBe(CREDS.shadowsocks);
    });

    it.each([
      'vmess',
      'vless',
      'trojan',
      'shadowsocks',
    ] as const)('%s: a client built from the old credential reaches a local server through the node', async (p) => {
      const client = await clientFor(linkOf(p));
      try {
        const res = await httpGetThroughProxy(client.port, `${dest.url}/bytes/1000`);
        expect(res.status).toBe(200);
        expect(res.bytes).toBe(1000);
      } finally {
        await client.stop();
      }
    });
  },
);

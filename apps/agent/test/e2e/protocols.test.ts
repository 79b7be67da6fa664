import {
  decodeSubscriptionBody,
  FLEET_PROTOCOLS,
  type FleetProtocol,
  fetchSubscription,
  httpGetThroughProxy,
  parseShareLink,
  type ShareLink,
  subscriptionUsage,
} from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CountingServer, clientFor, eventually, type Loop, skipReason, startCountingServer, startLoop } from './loop.ts';

/**
 * Issue 13, the proof: from an enrollment token to a serving node. The control plane and the
 * agent run as processes, the engine is Debian's v2ray; the links come from /sub as a share-link
 * app fetches them, a v2ray client is built from each, and an HTTP request through it reaches a
 * local server. One test per protocol/transport.
 */
if (skipReason) console.warn(`agent end-to-end tests skipped: ${skipReason}`);

let loop: Loop;
let dest: CountingServer;
let links: ShareLink[] = [];

beforeAll(async () => {
  if (skipReason) return;
  dest = await startCountingServer();
  loop = await startLoop([...FLEET_PROTOCOLS]);
  const { body } = await fetchSubscription(loop.fleet.subscriptionUrl);
  links = decodeSubscriptionBody(body).map(parseShareLink);
}, 120_000);

afterAll(async () => {
  await loop?.stop();
  await dest?.close();
});

const KIND: Record<FleetProtocol, (l: ShareLink) => boolean> = {
  'vmess-tcp': (l) => l.protocol === 'vmess' && l.network === 'tcp',
  'vmess-ws': (l) => l.protocol === 'vmess' && l.network === 'ws',
  'vless-tcp': (l) => l.protocol === 'vless' && l.network === 'tcp',
  'trojan-tls': (l) => l.protocol === 'trojan' && l.security === 'tls',
  shadowsocks: (l) => l.protocol === 'shadowsocks',
};

const linkOf = (p: FleetProtocol): ShareLink => {
  const found = links.filter(KIND[p]);
  expect(found, `one ${p} link in ${JSON.stringify(links.map((l) => l.name))}`).toHaveLength(1);
  return found[0] as ShareLink;
};

describe.skipIf(skipReason)('a node turned on with svc-agent serves every link of /sub (real engine, real clients)', () => {
  it('the node is online, on its desired revision, with the engine running and the agent version reported', async () => {
    const node = (await loop.cp.api.get(`/api/v1/nodes/${loop.fleet.node.id}`)).body;
    expect(node).toMatchObject({ connectivity: 'online', enrolled: true, last_apply_error: null });
    expect(node.applied_revision).toBe(node.desired_revision);
    expect(node.agent_version).toMatch(/^\d+\.\d+\.\d+/);
    expect(node.xray_version).toMatch(/^4\./);
    const status = await eventually(async () => {
      const s = (await loop.cp.api.get(`/api/v1/nodes/${loop.fleet.node.id}`)).body.status;
      return s?.xray_running ? s : undefined;
    }, 'a StatusReport with the engine running');
    expect(status.memory_total_bytes).toBeGreaterThan(0);
  });

  it.each([...FLEET_PROTOCOLS])('%s: a client built from the link reaches a local server through the node', async (p) => {
    const client = await clientFor(linkOf(p));
    try {
      const res = await httpGetThroughProxy(client.port, `${dest.url}/bytes/1000`);
      expect(res.status).toBe(200);
      expect(res.bytes).toBe(1000);
    } finally {
      await client.stop();
    }
  });

  it('bytes sent through the links appear, exactly once, in the subscription’s used bytes and in the subscription-userinfo header', async () => {
    const client = await clientFor(linkOf('vmess-tcp'));
    try {
      for (let i = 0; i < 3; i++) expect((await httpGetThroughProxy(client.port, `${dest.url}/bytes/250000`)).status).toBe(200);
    } finally {
      await client.stop();
    }
    // Every test of this file went through this subscription: what crossed the destination's
    // sockets (request and answer bytes, as the engine relayed them) is what must be credited.
    const sent = () => dest.totals().uplink + dest.totals().downlink;
    await eventually(async () => (sent() >= 750_000 ? true : undefined), 'the destination saw the bytes');
    const usage = await eventually(async () => {
      const u = await subscriptionUsage(loop.cp.api, loop.fleet.subscription.id);
      return u.used_bytes >= sent() ? u : undefined;
    }, 'the usage credited');
    expect(usage.used_bytes).toBe(sent());
    expect(usage.uplink_bytes).toBe(dest.totals().uplink);
    expect(usage.downlink_bytes).toBe(dest.totals().downlink);
    const { headers } = await fetchSubscription(loop.fleet.subscriptionUrl);
    const info = Object.fromEntries(
      (headers.get('subscription-userinfo') ?? '').split(';').map((kv) => kv.trim().split('=') as [string, string]),
    );
    expect(Number(info.upload)).toBe(usage.uplink_bytes);
    expect(Number(info.download)).toBe(usage.downlink_bytes);
  });
});

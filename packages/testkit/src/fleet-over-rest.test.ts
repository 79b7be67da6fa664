import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startControlPlane } from './control-plane-process.ts';
import { createFleetForProtocols, type Fleet, fetchSubscription, subscriptionUsage } from './fleet-over-rest.ts';
import { v2rayClientFromLink } from './share-link-client.ts';
import { decodeSubscriptionBody, parseShareLink, type ShareLink } from './share-links.ts';
import { v2rayAvailable, v2rayTest } from './v2ray.ts';

/** The fleet of the end-to-end tests, made over REST on a real `svc start`, read back as a share-link app reads it. */

const PORTS = { 'vmess-tcp': 31001, 'vmess-ws': 31002, 'vless-tcp': 31003, 'trojan-tls': 31004, shadowsocks: 31005 } as const;

let cp: ControlPlane;
let fleet: Fleet;
let links: ShareLink[];

beforeAll(async () => {
  cp = await startControlPlane();
  fleet = await createFleetForProtocols(cp.api, { ports: PORTS });
  links = decodeSubscriptionBody((await fetchSubscription(fleet.subscriptionUrl)).body).map(parseShareLink);
}, 180_000);
afterAll(async () => {
  await cp?.stop();
});

const byPort = (port: number) => links.find((l) => l.port === port) as ShareLink;

describe('createFleetForProtocols over the admin REST API', () => {
  it('makes one inbound per pair on the node at its port, and an enrollment token for the control plane the test started', () => {
    expect(fleet.node.address).toBe('127.0.0.1');
    expect(Object.fromEntries(Object.entries(fleet.inbounds).map(([k, v]) => [k, v.port]))).toEqual(PORTS);
    expect(fleet.enroll).toMatchObject({ node_id: fleet.node.id, grpc_endpoint: cp.grpcEndpoint });
    expect(fleet.enroll.ca_cert_pem).toContain('BEGIN CERTIFICATE');
    expect(fleet.subscription.status).toBe('active');
    expect(fleet.subscriptionUrl).toBe(`${cp.http}/sub/${fleet.subscriptionToken}`);
  });

  it('GET /sub/{token} as v2rayNG answers the base64 list: one link per inbound, each the pair it was made as', () => {
    expect(links.map((l) => l.port).sort()).toEqual(Object.values(PORTS).sort());
    for (const l of links) expect(l.address).toBe('127.0.0.1');
    expect(byPort(PORTS['vmess-tcp'])).toMatchObject({ protocol: 'vmess', network: 'tcp', security: 'none' });
    expect(byPort(PORTS['vmess-ws'])).toMatchObject({ protocol: 'vmess', network: 'ws', path: '/ws', security: 'none' });
    expect(byPort(PORTS['vless-tcp'])).toMatchObject({ protocol: 'vless', network: 'tcp', security: 'none', flow: '' });
    expect(byPort(PORTS['trojan-tls'])).toMatchObject({ protocol: 'trojan', network: 'tcp', security: 'tls', sni: 'localhost' });
    expect(byPort(PORTS.shadowsocks)).toMatchObject({ protocol: 'shadowsocks', method: 'aes-128-gcm' });
    // One subscription: VMess over both transports carries the same id.
    expect(byPort(PORTS['vmess-tcp']).id).toBe(byPort(PORTS['vmess-ws']).id);
  });

  it('a new subscription has nothing credited yet', async () => {
    expect(await subscriptionUsage(cp.api, fleet.subscription.id)).toEqual({
      status: 'active',
      used_bytes: 0,
      uplink_bytes: 0,
      downlink_bytes: 0,
    });
  });

  it.skipIf(!v2rayAvailable().available)('v2ray 4 loads the client config built from every served link', async () => {
    for (const link of links) {
      const verdict = await v2rayTest(v2rayClientFromLink(link, { httpProxyPort: 18081, allowInsecure: true }), `served-${link.protocol}`);
      expect(verdict.code, `${link.name}: ${verdict.output}`).toBe(0);
    }
  });
});

import type { DeviceDenials } from '@svc/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Gateway, startGateway } from './harness.ts';

// Issue 36, the control plane's part of device limits, through real gRPC over mTLS with the
// agent simulator: DeviceReports from two nodes whose union of client addresses exceeds the
// subscription's device_limit lead to the same DeviceDenials on both (the address seen last);
// DeviceDenials also come whole when a stream opens; garbage in a report is dropped, not fatal.

let g: Gateway;
let profileId: string;
let clientId: string;
let port = 31000;

beforeAll(async () => {
  g = await startGateway();
  const t = await g.token();
  profileId = (
    await g.s.api.post(
      '/api/v1/inbound-profiles',
      { name: 'vless-tcp', protocol: 'vless', stream: { network: 'tcp', security: 'none' } },
      { token: t },
    )
  ).body.id;
  clientId = (await g.s.api.post('/api/v1/clients', { email: 'devices@example.com' }, { token: t })).body.id;
});
afterAll(() => g.stop());

async function groupOn(nodeIds: string[]): Promise<string> {
  const t = await g.token();
  const inbounds: string[] = [];
  for (const node_id of nodeIds) {
    const inbound = await g.s.api.post('/api/v1/inbounds', { node_id, profile_id: profileId, port: port++ }, { token: t });
    expect(inbound.status, inbound.text).toBe(201);
    inbounds.push(inbound.body.id);
  }
  const group = await g.s.api.post('/api/v1/access-groups', { name: `g-${port}`, inbound_ids: inbounds }, { token: t });
  expect(group.status, group.text).toBe(201);
  return group.body.id;
}

async function subscription(body: Record<string, unknown>): Promise<string> {
  const res = await g.s.api.post('/api/v1/subscriptions', { client_id: clientId, ...body }, { token: await g.token() });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

const last = (d: DeviceDenials[]) => (d.length === 0 ? undefined : d[d.length - 1]);
const denialsOf = (d: DeviceDenials[], subscriptionId: string) =>
  last(d)?.users.find((u) => u.subscriptionId === subscriptionId)?.addresses ?? [];

describe('DeviceReport → the fleet-wide count → DeviceDenials', () => {
  it('two nodes whose union exceeds device_limit 2: the third address is denied on both, and freed when it goes', async () => {
    const a = await g.enrolledAgent();
    const b = await g.enrolledAgent();
    const sub = await subscription({ access_group_ids: [await groupOn([a.node.id, b.node.id])], device_limit: 2 });
    a.agent.connect();
    b.agent.connect();
    // Whole set on stream open (nothing denied yet): replaces whatever the agent held.
    await a.agent.waitFor(() => a.agent.deviceDenials.length === 1, 10_000, 'DeviceDenials on open');
    await b.agent.waitFor(() => b.agent.deviceDenials.length === 1, 10_000, 'DeviceDenials on open');
    expect(a.agent.deviceDenials[0]).toEqual({ users: [] });

    a.agent.sendDevices({ [sub]: ['198.51.100.1', '198.51.100.2'] });
    await eventually(async () => {
      const online = (await g.s.api.get(`/api/v1/subscriptions/${sub}/devices`, { token: await g.token() })).body.online;
      expect(online).toHaveLength(2);
    });
    g.s.clock.advance(1000);
    b.agent.sendDevices({ [sub]: ['198.51.100.2', '2001:db8:1:2::/64'] });
    await a.agent.waitFor(() => denialsOf(a.agent.deviceDenials, sub).length === 1, 10_000, 'denial on A');
    await b.agent.waitFor(() => denialsOf(b.agent.deviceDenials, sub).length === 1, 10_000, 'denial on B');
    expect(denialsOf(a.agent.deviceDenials, sub)).toEqual(['2001:db8:1:2::/64']);
    expect(denialsOf(b.agent.deviceDenials, sub)).toEqual(['2001:db8:1:2::/64']);
    const view = (await g.s.api.get(`/api/v1/subscriptions/${sub}/devices`, { token: await g.token() })).body;
    expect(view).toMatchObject({ device_limit: 2, denied: ['2001:db8:1:2::/64'] });
    expect(view.online.map((o: { address: string; node_name: string }) => [o.address, o.node_name]).sort()).toEqual(
      [
        ['198.51.100.1', a.node.name],
        ['198.51.100.2', a.node.name],
        ['198.51.100.2', b.node.name],
        ['2001:db8:1:2::/64', b.node.name],
      ].sort(),
    );

    // A reconnecting node gets the whole set as its stream opens.
    await b.agent.disconnect();
    const before = b.agent.deviceDenials.length;
    b.agent.connect();
    await b.agent.waitFor(() => b.agent.deviceDenials.length > before, 10_000, 'DeviceDenials on reopen');
    expect(denialsOf(b.agent.deviceDenials, sub)).toEqual(['2001:db8:1:2::/64']);

    // The first device leaves A: the limit has room, the denied address is let in on both.
    const sentA = a.agent.deviceDenials.length;
    a.agent.sendDevices({ [sub]: ['198.51.100.2'] });
    await a.agent.waitFor(() => a.agent.deviceDenials.length > sentA, 10_000, 'denial lifted on A');
    expect(last(a.agent.deviceDenials)).toEqual({ users: [] });
    await b.agent.waitFor(() => denialsOf(b.agent.deviceDenials, sub).length === 0, 10_000, 'denial lifted on B');
  });

  it('garbage in a report is dropped (not an address, not folded to /64, a NUL, an unknown user); the stream stays and the rest counts', async () => {
    const a = await g.enrolledAgent();
    const sub = await subscription({ access_group_ids: [await groupOn([a.node.id])], device_limit: 1 });
    a.agent.connect();
    await a.agent.waitFor(() => a.agent.deviceDenials.length === 1, 10_000, 'DeviceDenials on open');
    a.agent.sendDevices({
      [sub]: ['203.0.113.1', 'not-an-address', '2001:db8::1', '2001:db8::/64', '2001:DB8:0:1::/64', 'x\u0000y', '203.0.113.2'],
      sub_does_not_exist: ['203.0.113.9'],
      'bad\u0000id': ['203.0.113.8'],
    });
    await a.agent.waitFor(() => denialsOf(a.agent.deviceDenials, sub).length === 1, 10_000, 'denial');
    expect(denialsOf(a.agent.deviceDenials, sub)).toEqual(['203.0.113.2']);
    expect(a.agent.ended).toBeNull();
    const online = (await g.s.api.get(`/api/v1/subscriptions/${sub}/devices`, { token: await g.token() })).body.online;
    expect(online.map((o: { address: string }) => o.address)).toEqual(['203.0.113.1', '203.0.113.2']);
    // The stream still serves: a status is taken.
    a.agent.sendStatus();
  });

  it('a node that serves the subscription but reported nothing of it hears its denials too', async () => {
    const a = await g.enrolledAgent();
    const c = await g.enrolledAgent();
    const sub = await subscription({ access_group_ids: [await groupOn([a.node.id, c.node.id])], device_limit: 1 });
    a.agent.connect();
    c.agent.connect();
    await c.agent.waitFor(() => c.agent.deviceDenials.length === 1, 10_000, 'DeviceDenials on open');
    a.agent.sendDevices({ [sub]: ['192.0.2.1', '192.0.2.2'] });
    await c.agent.waitFor(() => denialsOf(c.agent.deviceDenials, sub).length === 1, 10_000, 'denial on the quiet node');
    expect(denialsOf(c.agent.deviceDenials, sub)).toEqual(['192.0.2.2']);
  });
});

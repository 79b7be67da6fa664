import type { DeviceDenials } from '@svc/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Split, splitAvailable, startSplit } from './split-harness.ts';

/**
 * Issue 36 in split mode: a DeviceReport taken by one gateway replica changes the DeviceDenials
 * of a node whose stream another replica holds; devices.denials-changed crosses on Redis and
 * that replica sends the node its set.
 */
let split: Split;

describe.skipIf(!splitAvailable())('split mode: DeviceDenials reach the replica holding the stream', () => {
  beforeAll(async () => {
    split = await startSplit(2);
  }, 120_000);
  afterAll(() => split?.stop());

  it('node A on replica 0, node B on replica 1, device_limit 1: B’s report denies its address on both', async () => {
    const token = await split.token();
    const api = split.api;
    const a = await split.enrolledAgent(0);
    const b = await split.enrolledAgent(1);
    const profile = (
      await api.post(
        '/api/v1/inbound-profiles',
        { name: 'vless-split', protocol: 'vless', stream: { network: 'tcp', security: 'none' } },
        { token },
      )
    ).body;
    const inbounds = [];
    for (const [i, n] of [a.node, b.node].entries())
      inbounds.push((await api.post('/api/v1/inbounds', { node_id: n.id, profile_id: profile.id, port: 5443 + i }, { token })).body.id);
    const group = (await api.post('/api/v1/access-groups', { name: 'split-devices', inbound_ids: inbounds }, { token })).body;
    const client = (await api.post('/api/v1/clients', { email: 'split-devices@example.com' }, { token })).body;
    const sub = await api.post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id], device_limit: 1 }, { token });
    expect(sub.status, sub.text).toBe(201);
    const id = sub.body.id as string;
    a.agent.connect();
    b.agent.connect();
    await a.agent.waitFor(() => a.agent.deviceDenials.length >= 1, 15_000, 'DeviceDenials on open');
    await b.agent.waitFor(() => b.agent.deviceDenials.length >= 1, 15_000, 'DeviceDenials on open');
    a.agent.sendDevices({ [id]: ['198.51.100.10'] });
    const online = async () => (await api.get(`/api/v1/subscriptions/${id}/devices`, { token })).body.online.length as number;
    for (const end = Date.now() + 10_000; (await online()) < 1; ) {
      if (Date.now() > end) throw new Error('A’s report not recorded');
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 20));
    b.agent.sendDevices({ [id]: ['198.51.100.20'] });
    const deniedOn = (d: DeviceDenials[]) => d[d.length - 1]?.users.find((u) => u.subscriptionId === id)?.addresses ?? [];
    await a.agent.waitFor(() => deniedOn(a.agent.deviceDenials).length === 1, 15_000, 'denial on A (other replica)');
    await b.agent.waitFor(() => deniedOn(b.agent.deviceDenials).length === 1, 15_000, 'denial on B');
    expect(deniedOn(a.agent.deviceDenials)).toEqual(['198.51.100.20']);
    expect(deniedOn(b.agent.deviceDenials)).toEqual(['198.51.100.20']);
  });
});

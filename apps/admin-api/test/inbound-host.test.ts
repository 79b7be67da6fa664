import { setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let token: string;
let node: { id: string };
let profile: { id: string };
beforeAll(async () => {
  s = await startAdminApi();
  token = (await setupOwner(s)).access_token;
  node = (await s.api.post('/api/v1/nodes', { name: 'edge', address: 'edge.example.com' }, { token })).body;
  profile = (
    await s.api.post(
      '/api/v1/inbound-profiles',
      {
        name: 'plain',
        protocol: 'vless',
        stream: { network: 'tcp', security: 'none' },
        sniffing: { enabled: false, dest_override: [], route_only: false },
      },
      { token },
    )
  ).body;
});
afterAll(() => s.stop());

describe("an inbound's host follows the same rule and normal form as a node's address", () => {
  it.each([
    ['Edge.Example.COM.', 'edge.example.com'],
    ['[2001:DB8::1]', '2001:db8::1'],
    ['203.0.113.7', '203.0.113.7'],
  ])('%s is stored as %s', async (given, stored) => {
    const res = await s.api.post(
      '/api/v1/inbounds',
      { node_id: node.id, profile_id: profile.id, port: 20000 + Math.floor(Math.random() * 40000), host: given },
      { token },
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body.host).toBe(stored);
  });

  it.each(['1.2.3', 'https://edge.example.com', 'edge.example.com:443'])('%s is refused with errors.host', async (given) => {
    const res = await s.api.post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 1234, host: given }, { token });
    expect(res.status).toBe(400);
    expect(res.body.errors.host).toBeDefined();
  });
});

describe('a profile PATCH bumps nodes only when what they run changes', () => {
  it('re-sending the same sniffing bumps nothing; a real change bumps the node', async () => {
    const port = 30000 + Math.floor(Math.random() * 30000);
    expect((await s.api.post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port }, { token })).status).toBe(201);
    const rev = async () => (await s.api.get(`/api/v1/nodes/${node.id}`, { token })).body.desired_revision as number;
    const r0 = await rev();
    const same = await s.api.patch(
      `/api/v1/inbound-profiles/${profile.id}`,
      { sniffing: { enabled: false, dest_override: [], route_only: false } },
      { token },
    );
    expect(same.status, same.text).toBe(200);
    expect(await rev()).toBe(r0);
    const real = await s.api.patch(
      `/api/v1/inbound-profiles/${profile.id}`,
      { sniffing: { enabled: true, dest_override: ['http', 'tls'], route_only: false } },
      { token },
    );
    expect(real.status, real.text).toBe(200);
    expect(await rev()).toBe(r0 + 1);
  });
});

import type { NodeConfig } from '@svc/proto';
import { type ApiClient, selfSignedCertificate } from '@svc/testkit';
import type { AgentSimulator } from '@svc/testkit/agent-simulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** What the trigger scenarios need from a deployment (all-in-one or split processes). */
export interface TriggerEnv {
  api: ApiClient;
  token(): Promise<string>;
  enrolledAgent(): Promise<{ node: { id: string }; agent: AgentSimulator }>;
  desiredRevision(nodeId: string): Promise<bigint>;
  /** Lets the subscription's expiry pass and runs the expiry sweep (the worker's job). */
  expire(subscriptionId: string): Promise<void>;
}

/**
 * Issue 5 item 5: every kind of change reaches the affected node as a new DesiredState,
 * watched at the simulator. Run by triggers.test.ts (all-in-one) and split-triggers.test.ts
 * (admin API and gateway replicas as separate processes over PostgreSQL + Redis).
 */
export function triggerScenarios(setup: () => Promise<TriggerEnv>, teardown: () => Promise<void>): void {
  let env: TriggerEnv;
  let node: { id: string };
  let agent: AgentSimulator;
  let profile: { id: string };
  let inbound: { id: string; tag: string };
  let group: { id: string };
  let client: { id: string };

  const call = async (method: 'post' | 'patch', path: string, body?: unknown) => {
    const res = await env.api[method](path, body, { token: await env.token() });
    expect(res.status, `${path} ${res.text}`).toBeLessThan(300);
    return res.body;
  };
  const api = {
    post: (path: string, body?: unknown) => call('post', path, body),
    patch: (path: string, body: unknown) => call('patch', path, body),
    del: async (path: string) => {
      const res = await env.api.delete(path, { token: await env.token() });
      expect(res.status, `${path} ${res.text}`).toBe(204);
    },
  };

  /** Runs `change`, then waits for the agent to get a newer DesiredState and returns its config. */
  async function pushed(a: AgentSimulator, nodeId: string, change: () => Promise<unknown>): Promise<NodeConfig> {
    const before = await env.desiredRevision(nodeId);
    await change();
    const after = await env.desiredRevision(nodeId);
    expect(after, 'the change moved the desired revision').toBeGreaterThan(before);
    await a.waitForRevision(after);
    return a.desiredStates.at(-1)?.config as NodeConfig;
  }

  const usersOf = (c: NodeConfig, tag: string) => c.xray?.inbounds.find((i) => i.tag === tag)?.users.map((u) => u.email) ?? [];

  beforeAll(async () => {
    env = await setup();
    ({ node, agent } = await env.enrolledAgent());
    agent.connect();
    await agent.waitForRevision(1n);
    profile = await api.post('/api/v1/inbound-profiles', {
      name: 'vless-tcp',
      protocol: 'vless',
      stream: { network: 'tcp', security: 'none' },
    });
    inbound = await api.post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 10443 });
    group = await api.post('/api/v1/access-groups', { name: 'g1', inbound_ids: [inbound.id] });
    client = await api.post('/api/v1/clients', { email: 'triggers@example.com' });
  }, 120_000);
  afterAll(async () => {
    await teardown();
  });

  describe('subscription changes reach the node', () => {
    it('created, rotated, limited, disabled, re-enabled, expired, deleted', async () => {
      let sub: { id: string } = { id: '' };
      let c = await pushed(agent, node.id, async () => {
        sub = await api.post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] });
      });
      expect(usersOf(c, inbound.tag)).toEqual([`${sub.id}@svc`]);
      const idBefore = c.xray?.inbounds[0]?.users[0]?.vless?.id;

      c = await pushed(agent, node.id, () => api.post(`/api/v1/subscriptions/${sub.id}/rotate-credentials`));
      expect(c.xray?.inbounds[0]?.users[0]?.vless?.id).not.toBe(idBefore);

      c = await pushed(agent, node.id, () => api.patch(`/api/v1/subscriptions/${sub.id}`, { traffic_limit_bytes: 0 }));
      expect(usersOf(c, inbound.tag)).toEqual([]);
      c = await pushed(agent, node.id, () => api.patch(`/api/v1/subscriptions/${sub.id}`, { traffic_limit_bytes: null }));
      expect(usersOf(c, inbound.tag)).toEqual([`${sub.id}@svc`]);

      c = await pushed(agent, node.id, () => api.patch(`/api/v1/subscriptions/${sub.id}`, { status: 'disabled' }));
      expect(usersOf(c, inbound.tag)).toEqual([]);
      c = await pushed(agent, node.id, () => api.patch(`/api/v1/subscriptions/${sub.id}`, { status: 'active' }));
      expect(usersOf(c, inbound.tag)).toEqual([`${sub.id}@svc`]);

      c = await pushed(agent, node.id, () => env.expire(sub.id));
      expect(usersOf(c, inbound.tag)).toEqual([]);

      const other = await api.post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] });
      await agent.waitForRevision(await env.desiredRevision(node.id));
      c = await pushed(agent, node.id, () => api.del(`/api/v1/subscriptions/${other.id}`));
      expect(usersOf(c, inbound.tag)).toEqual([]);
    });
  });

  describe('fleet changes reach the node', () => {
    it('access group inbound list changed; profile edited; inbound created, edited, deleted', async () => {
      const sub = await api.post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] });
      await agent.waitForRevision(await env.desiredRevision(node.id));

      let second: { id: string; tag: string } = { id: '', tag: '' };
      let c = await pushed(agent, node.id, async () => {
        second = await api.post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 10444 });
      });
      expect(c.xray?.inbounds.map((i) => i.port)).toEqual(expect.arrayContaining([10443, 10444]));
      expect(usersOf(c, second.tag)).toEqual([]);

      c = await pushed(agent, node.id, () => api.patch(`/api/v1/access-groups/${group.id}`, { inbound_ids: [inbound.id, second.id] }));
      expect(usersOf(c, second.tag)).toEqual([`${sub.id}@svc`]);

      c = await pushed(agent, node.id, () =>
        api.patch(`/api/v1/inbound-profiles/${profile.id}`, { sniffing: { enabled: false, dest_override: [], route_only: false } }),
      );
      expect(c.xray?.inbounds.every((i) => i.sniffing?.enabled === false)).toBe(true);

      c = await pushed(agent, node.id, () => api.patch(`/api/v1/inbounds/${second.id}`, { port: 10445 }));
      expect(c.xray?.inbounds.map((i) => i.port).sort()).toEqual([10443, 10445]);

      c = await pushed(agent, node.id, async () => {
        await api.patch(`/api/v1/access-groups/${group.id}`, { inbound_ids: [inbound.id] });
        await api.del(`/api/v1/inbounds/${second.id}`);
      });
      expect(c.xray?.inbounds.map((i) => i.tag)).toEqual([inbound.tag]);
    });

    it('chain created, re-ordered, deleted: each hop gets its part', async () => {
      const { node: other, agent: otherAgent } = await env.enrolledAgent();
      otherAgent.connect();
      await otherAgent.waitForRevision(1n);
      let chain: { id: string } = { id: '' };
      const c = await pushed(agent, node.id, async () => {
        chain = await api.post('/api/v1/chains', {
          name: 'c1',
          hops: [
            { node_id: node.id, port: 30001 },
            { node_id: other.id, port: 30002 },
          ],
        });
      });
      expect(c.xray?.outbounds.map((o) => o.tag)).toContain(`chain-out-${chain.id}`);
      await otherAgent.waitForRevision(await env.desiredRevision(other.id));
      expect(otherAgent.desiredStates.at(-1)?.config?.xray?.inbounds.map((i) => i.tag)).toContain(`chain-in-${chain.id}`);

      const reordered = await pushed(otherAgent, other.id, () =>
        api.patch(`/api/v1/chains/${chain.id}`, {
          hops: [
            { node_id: other.id, port: 30002 },
            { node_id: node.id, port: 30001 },
          ],
        }),
      );
      expect(reordered.xray?.outbounds.find((o) => o.tag === `chain-out-${chain.id}`)?.port).toBe(30001);
      await agent.waitForRevision(await env.desiredRevision(node.id));
      expect(agent.desiredStates.at(-1)?.config?.xray?.inbounds.map((i) => i.tag)).toContain(`chain-in-${chain.id}`);

      const gone = await pushed(agent, node.id, () => api.del(`/api/v1/chains/${chain.id}`));
      expect(gone.xray?.inbounds.map((i) => i.tag)).not.toContain(`chain-in-${chain.id}`);
      await otherAgent.waitForRevision(await env.desiredRevision(other.id));
      expect(otherAgent.desiredStates.at(-1)?.config?.xray?.outbounds.map((o) => o.tag)).toEqual(['direct', 'block']);
    });

    it('certificate renewed: the node serving it gets the new PEM', async () => {
      const first = selfSignedCertificate();
      const cert = await api.post('/api/v1/certificates', { kind: 'uploaded', name: 'edge', ...first });
      const tlsProfile = await api.post('/api/v1/inbound-profiles', {
        name: 'trojan-tls',
        protocol: 'trojan',
        stream: { network: 'tcp', security: 'tls', tls: { certificate_id: cert.id, server_names: ['example.com'] } },
      });
      let c = await pushed(agent, node.id, () =>
        api.post('/api/v1/inbounds', { node_id: node.id, profile_id: tlsProfile.id, port: 10446 }),
      );
      expect(c.certificates).toEqual([{ id: cert.id, certPem: first.cert_pem, keyPem: first.key_pem }]);
      const renewed = selfSignedCertificate();
      c = await pushed(agent, node.id, () => api.patch(`/api/v1/certificates/${cert.id}`, renewed));
      expect(c.certificates).toEqual([{ id: cert.id, certPem: renewed.cert_pem, keyPem: renewed.key_pem }]);
    });

    it('node re-enabled: its agent is admitted again and gets a complete snapshot', async () => {
      const { node: n, agent: a } = await env.enrolledAgent();
      a.connect();
      await a.waitForRevision(1n);
      await api.patch(`/api/v1/nodes/${n.id}`, { admin_status: 'disabled' });
      await a.waitForEnd();
      await api.patch(`/api/v1/nodes/${n.id}`, { admin_status: 'enabled' });
      expect(await env.desiredRevision(n.id)).toBe(2n);
      a.connect();
      await a.waitForRevision(2n);
    });
  });
}

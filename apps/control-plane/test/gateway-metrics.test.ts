import { usageFolded } from '@svc/testkit';
import { type Scrape, scrapeMetrics } from '@svc/testkit/metrics-scrape';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Gateway, startGateway } from './harness.ts';

// docs/observability.md: what the agent gateway counts, read over its metrics port and parsed
// as Prometheus parses it, through real gRPC over mTLS with the agent simulator.

const scrape = (g: Gateway): Promise<Scrape> => scrapeMetrics(g.s.metricsUrl as string);

/** A node serving `users` subscriptions (an inbound, an access group granting it); the first one's id. */
async function servedNode(g: Gateway, users = 1) {
  const t = await g.token();
  const post = async (path: string, body: unknown) => {
    const res = await g.s.api.post(path, body, { token: t });
    expect(res.status, res.text).toBe(201);
    return res.body;
  };
  const { node, agent } = await g.enrolledAgent();
  const profile = await post('/api/v1/inbound-profiles', {
    name: `p-${node.id}`,
    protocol: 'vless',
    stream: { network: 'tcp', security: 'none' },
  });
  const inbound = await post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 443 });
  const group = await post('/api/v1/access-groups', { name: `g-${node.id}`, inbound_ids: [inbound.id] });
  const client = await post('/api/v1/clients', { email: `c-${node.id}@example.com` });
  const sub = await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] });
  for (let i = 1; i < users; i++) await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] });
  return { node, agent, subscriptionId: sub.id as string };
}

describe('the gateway counts streams, DesiredStates, apply results and usage', () => {
  let g: Gateway;
  beforeAll(async () => {
    g = await startGateway({ server: { env: { SVC_METRICS_PORT: '0' } } });
  });
  afterAll(() => g.stop());

  it('an open stream is one on svc_gateway_streams_open until it ends', async () => {
    const { agent } = await g.enrolledAgent();
    const before = (await scrape(g)).value('svc_gateway_streams_open');
    agent.connect();
    await eventually(async () => expect((await scrape(g)).value('svc_gateway_streams_open')).toBe(before + 1));
    await agent.disconnect();
    await eventually(async () => expect((await scrape(g)).value('svc_gateway_streams_open')).toBe(before));
  });

  it('each DesiredState sent is counted with its bytes; under grpc.gzip_min_bytes it goes out as encoded', async () => {
    const { agent } = await servedNode(g);
    const before = await scrape(g);
    agent.connect();
    await agent.waitFor(() => agent.desiredStates.length > 0 && agent.acks.length === 0, 10_000, 'a DesiredState');
    await eventually(async () =>
      expect((await scrape(g)).value('svc_gateway_apply_results_total', { result: 'applied' })).toBe(
        before.value('svc_gateway_apply_results_total', { result: 'applied' }) + agent.desiredStates.length,
      ),
    );
    const after = await scrape(g);
    const grew = (name: string) => after.value(name) - before.value(name);
    expect(grew('svc_gateway_desired_states_sent_total')).toBe(agent.desiredStates.length);
    expect(after.count('svc_gateway_desired_state_size_bytes') - before.count('svc_gateway_desired_state_size_bytes')).toBe(
      agent.desiredStates.length,
    );
    const raw = grew('svc_gateway_desired_state_raw_bytes_total');
    expect(raw).toBeGreaterThan(100);
    expect(after.sum('svc_gateway_desired_state_size_bytes') - before.sum('svc_gateway_desired_state_size_bytes')).toBe(raw);
    expect(grew('svc_gateway_desired_state_sent_bytes_total')).toBe(raw);
    await agent.disconnect();
  });

  it('an ApplyResult that is not ok counts as failed', async () => {
    const { agent } = await servedNode(g);
    const before = (await scrape(g)).value('svc_gateway_apply_results_total', { result: 'failed' });
    agent.failApplyWith = 'xray: failed to start';
    agent.connect();
    await agent.waitFor(() => agent.desiredStates.length > 0, 10_000, 'a DesiredState');
    await eventually(async () =>
      expect((await scrape(g)).value('svc_gateway_apply_results_total', { result: 'failed' })).toBe(before + agent.desiredStates.length),
    );
    await agent.disconnect();
  });

  it('usage entries: credited, refused as invalid, as not served, and a replayed report refused whole', async () => {
    const { agent, subscriptionId } = await servedNode(g);
    agent.connect();
    const before = await scrape(g);
    await agent.sendUsage(1n, [
      { subscriptionId, uplinkBytes: 10n, downlinkBytes: 20n },
      { subscriptionId: 'sub_\u0000', uplinkBytes: 1n, downlinkBytes: 1n },
      { subscriptionId: '', uplinkBytes: 1n, downlinkBytes: 1n },
      { subscriptionId: `sub_${'0'.repeat(26)}`, uplinkBytes: 5n, downlinkBytes: 5n },
    ]);
    await usageFolded(g.s.deps.db);
    await agent.sendUsage(1n, [
      { subscriptionId, uplinkBytes: 10n, downlinkBytes: 20n },
      { subscriptionId, uplinkBytes: 1n, downlinkBytes: 1n },
    ]);
    await usageFolded(g.s.deps.db);
    expect(agent.acks).toEqual([1n, 1n]);
    const after = await scrape(g);
    const grew = (name: string, labels?: Record<string, string>) => after.value(name, labels) - before.value(name, labels);
    expect(grew('svc_usage_entries_ingested_total')).toBe(1);
    expect(grew('svc_usage_entries_refused_total', { reason: 'invalid' })).toBe(2);
    expect(grew('svc_usage_entries_refused_total', { reason: 'not_served' })).toBe(1);
    expect(grew('svc_usage_entries_refused_total', { reason: 'replayed' })).toBe(2);
    expect(grew('svc_usage_reports_total', { result: 'applied' })).toBe(1);
    expect(grew('svc_usage_reports_total', { result: 'replayed' })).toBe(1);
    // Folded: nothing staged, nothing waiting.
    expect([after.value('svc_usage_inbox_entries'), after.value('svc_usage_inbox_oldest_seconds')]).toEqual([0, 0]);
    // No node, subscription or report id ever becomes a label.
    const labels = JSON.stringify([...after.families.values()].flatMap((f) => f.samples.map((s) => s.labels)));
    expect(labels).not.toMatch(/nod_|sub_|stm_/);
    await agent.disconnect();
  });
});

describe('DesiredStates gzip’d for the agent are counted as sent, smaller than encoded', () => {
  let g: Gateway;
  beforeAll(async () => {
    g = await startGateway({ server: { env: { SVC_METRICS_PORT: '0', SVC_GRPC_GZIP_MIN_BYTES: '64' } } });
  });
  afterAll(() => g.stop());

  it('raw bytes count the encoded message, sent bytes the gzip member the agent received', async () => {
    // 20 users (~1.7 KiB encoded): what their ids and settings repeat compresses.
    const { agent } = await servedNode(g, 20);
    const before = await scrape(g);
    agent.connect();
    await agent.waitFor(() => agent.desiredStates.length > 0, 10_000, 'a DesiredState');
    await eventually(async () =>
      expect((await scrape(g)).value('svc_gateway_desired_state_sent_bytes_total')).toBeGreaterThan(
        before.value('svc_gateway_desired_state_sent_bytes_total'),
      ),
    );
    const after = await scrape(g);
    const raw = after.value('svc_gateway_desired_state_raw_bytes_total') - before.value('svc_gateway_desired_state_raw_bytes_total');
    const sent = after.value('svc_gateway_desired_state_sent_bytes_total') - before.value('svc_gateway_desired_state_sent_bytes_total');
    expect(raw).toBeGreaterThan(64);
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThan(raw);
    await agent.disconnect();
  });
});

import { LogSource } from '@svc/proto';
import { type ApiClient, openEventStream } from '@svc/testkit';
import { AgentSimulator } from '@svc/testkit/agent-simulator';
import { Status } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Split, splitAvailable, startSplit } from './split-harness.ts';

/**
 * Split mode (issue 4 "Checked by"): the admin API and two gateway replicas as separate
 * processes over PostgreSQL + Redis, as docker-compose runs them. Node changes, stream
 * hand-overs and agent commands cross process boundaries on Redis.
 */
let split: Split;
let api: ApiClient;
let token: string;

describe.skipIf(!splitAvailable())('split mode: admin-api and two control-plane replicas over PostgreSQL + Redis', () => {
  beforeAll(async () => {
    split = await startSplit(2);
    api = split.api;
    token = await split.token();
  }, 120_000);
  afterAll(() => split?.stop());

  const endpoints = () => split.endpoints;
  const enrolled = (at = 0) => split.enrolledAgent(at);
  const view = async (id: string) => (await api.get(`/api/v1/nodes/${id}`, { token })).body;
  async function until(check: () => Promise<boolean>, what: string, ms = 10_000) {
    const end = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`not reached: ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('every replica serves the CA the admin API hands out with enrollment tokens', async () => {
    const a = await enrolled(0);
    const b = await enrolled(1);
    expect(a.agent.nodeId).not.toBe(b.agent.nodeId);
  });

  it('a change made through the admin process reaches the stream held by a replica process (nodes.changed over Redis)', async () => {
    const { node, agent } = await enrolled(0);
    agent.connect();
    await agent.waitForRevision(1n);
    const profile = (
      await api.post(
        '/api/v1/inbound-profiles',
        { name: `p-${node.id}`, protocol: 'trojan', stream: { network: 'tcp', security: 'none' } },
        { token },
      )
    ).body;
    expect((await api.post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 4443 }, { token })).status).toBe(201);
    await agent.waitForRevision(2n);
    await until(async () => (await view(node.id)).applied_revision === 2, 'applied revision 2');
  });

  it('disabling the node in the admin process ends its stream on the replica with UNAUTHENTICATED', async () => {
    const { node, agent } = await enrolled(1);
    agent.connect();
    await until(async () => (await view(node.id)).connectivity === 'online', 'online');
    expect((await api.patch(`/api/v1/nodes/${node.id}`, { admin_status: 'disabled' }, { token })).status).toBe(200);
    expect((await agent.waitForEnd()).code).toBe(Status.UNAUTHENTICATED);
    await until(async () => (await view(node.id)).connectivity === 'offline', 'offline');
  });

  it('restart-xray, a log snapshot and an SSE tail from the admin process reach the agent on another process', async () => {
    const { node, agent } = await enrolled(0);
    agent.connect();
    await until(async () => (await view(node.id)).connectivity === 'online', 'online');
    const restart = await api.post(`/api/v1/nodes/${node.id}/restart-xray`, undefined, { token });
    expect(restart.status, restart.text).toBe(202);
    await agent.waitFor(() => agent.restarts === 1);

    agent.logLines.push({ source: LogSource.XRAY, line: 'accepted tcp:1.2.3.4:443' });
    const logs = await api.get(`/api/v1/nodes/${node.id}/logs?limit=10`, { token });
    expect(logs.status, logs.text).toBe(200);
    expect(logs.body.lines.map((l: { line: string }) => l.line)).toEqual(['accepted tcp:1.2.3.4:443']);

    const tail = await openEventStream(`${api.baseUrl}/api/v1/nodes/${node.id}/logs/stream?source=xray`, { token });
    expect(tail.status).toBe(200);
    await tail.waitFor((ev) => ev.some((e) => e.event === 'log'));
    await tail.close();
    await agent.waitFor(() => agent.commands.some((c) => c.stopLogStream));
  });

  it('a second stream on the other replica replaces the first; the node stays online', async () => {
    const { node, agent } = await enrolled(0);
    agent.connect();
    await until(async () => (await view(node.id)).connectivity === 'online', 'online');
    const twin = new AgentSimulator({ ...agent.opts, endpoint: endpoints()[1] as string }, agent.nodeId, agent.certPem, agent.keyPem);
    twin.connect();
    expect((await agent.waitForEnd()).code).toBe(Status.ABORTED);
    await new Promise((r) => setTimeout(r, 300));
    expect((await view(node.id)).connectivity).toBe('online');
    expect(twin.ended).toBeNull();
    // Commands now go to the replica holding the new stream.
    expect((await api.post(`/api/v1/nodes/${node.id}/restart-xray`, undefined, { token })).status).toBe(202);
    await twin.waitFor(() => twin.restarts === 1);
  });

  it('a replica that dies without a word: its nodes go offline once it has been silent for the staleness window', async () => {
    const extra = await split.startReplica();
    const { node, agent } = await enrolled(endpoints().length - 1);
    agent.connect();
    await until(async () => (await view(node.id)).connectivity === 'online', 'online');
    await extra.app.kill();
    await until(async () => (await view(node.id)).connectivity === 'offline', 'offline after the crash', 15_000);
  });
});

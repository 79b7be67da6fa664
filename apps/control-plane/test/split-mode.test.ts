import { randomBytes } from 'node:crypto';
import { LogSource } from '@svc/proto';
import {
  type ApiClient,
  type AppProcess,
  createApiClient,
  createTestDatabase,
  openEventStream,
  spawnApp,
  type TestDatabase,
} from '@svc/testkit';
import { AgentSimulator } from '@svc/testkit/agent-simulator';
import { Status } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Split mode (issue 4 "Checked by"): the admin API and two gateway replicas as separate
 * processes over PostgreSQL + Redis, as docker-compose runs them. Node changes, stream
 * hand-overs and agent commands cross process boundaries on Redis.
 */
const redisUrl = process.env.REDIS_URL;
const pgUrl = process.env.DATABASE_URL;
const split = describe.skipIf(!redisUrl || !pgUrl);

let database: TestDatabase;
let admin: AppProcess;
const replicas: AppProcess[] = [];
let api: ApiClient;
let token: string;
let caCertPem: string;
const endpoints: string[] = [];
const agents: AgentSimulator[] = [];

const OWNER = { email: 'owner@example.com', password: 'correct horse battery staple' };

async function startReplica(env: Record<string, string>): Promise<{ app: AppProcess; endpoint: string }> {
  const app = spawnApp('apps/control-plane/src/main.ts', { ...env, SVC_GRPC_PORT: '0', SVC_GRPC_HOST: '127.0.0.1' });
  const line = await app.waitForLog(/^agent gateway listening/);
  return { app, endpoint: `localhost:${line.grpc_port}` };
}

split('split mode: admin-api and two control-plane replicas over PostgreSQL + Redis', () => {
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await createTestDatabase();
    env = {
      DATABASE_URL: database.url as string,
      REDIS_URL: redisUrl as string,
      SVC_REDIS_KEY_PREFIX: `svc-split-${randomBytes(5).toString('hex')}:`,
      SVC_INSTALLATION_KEY: randomBytes(32).toString('base64'),
      SVC_LOG_LEVEL: 'info',
      SVC_GRPC_REPLICA_HEARTBEAT_SECONDS: '1',
      SVC_AGENT_COMMAND_TIMEOUT_SECONDS: '5',
      SVC_DATA_DIR: '/nonexistent-split-mode',
    };
    admin = spawnApp('apps/admin-api/src/main.ts', { ...env, SVC_HTTP_PORT: '0', SVC_HTTP_HOST: '127.0.0.1' });
    const listening = await admin.waitForLog(/^admin-api listening on/);
    const setup = await admin.waitForLine((l) => l.includes('"setup_token"'), 'the setup token');
    api = createApiClient(listening.url);
    const created = await api.post('/api/v1/setup', { token: JSON.parse(setup).setup_token, ...OWNER });
    expect(created.status, created.text).toBe(201);
    token = (await api.post('/api/v1/auth/login', OWNER)).body.access_token;
    for (let i = 0; i < 2; i++) {
      const r = await startReplica(env);
      replicas.push(r.app);
      endpoints.push(r.endpoint);
    }
  }, 120_000);

  afterAll(async () => {
    for (const a of agents) await a.disconnect().catch(() => {});
    for (const p of [...replicas, admin]) await p?.kill();
    await database?.destroy();
  });

  async function enrolled(at = 0) {
    const tag = randomBytes(3).toString('hex');
    const node = (await api.post('/api/v1/nodes', { name: `split-${tag}`, address: `${tag}.example.com` }, { token })).body;
    const issued = (await api.post(`/api/v1/nodes/${node.id}/enroll-token`, undefined, { token })).body;
    caCertPem = issued.ca_cert_pem;
    const agent = await AgentSimulator.enroll({ endpoint: endpoints[at] as string, caCertPem, token: issued.token });
    agents.push(agent);
    return { node, agent };
  }
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
    const twin = new AgentSimulator({ ...agent.opts, endpoint: endpoints[1] as string }, agent.nodeId, agent.certPem, agent.keyPem);
    agents.push(twin);
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
    const extra = await startReplica(env);
    replicas.push(extra.app);
    endpoints.push(extra.endpoint);
    const { node, agent } = await enrolled(endpoints.length - 1);
    agent.connect();
    await until(async () => (await view(node.id)).connectivity === 'online', 'online');
    await extra.app.kill();
    await until(async () => (await view(node.id)).connectivity === 'offline', 'offline after the crash', 15_000);
  });
});

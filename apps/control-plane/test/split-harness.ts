import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { loadConfig } from '@svc/config';
import { createLogger, createRuntime, type Runtime } from '@svc/runtime';
import { type ApiClient, type AppProcess, createApiClient, createTestDatabase, spawnApp, type TestDatabase } from '@svc/testkit';
import { AgentSimulator } from '@svc/testkit/agent-simulator';

/**
 * Split mode as docker-compose runs it: the admin API and gateway replicas as separate
 * processes over one PostgreSQL schema and one Redis prefix; plus a runtime in the test
 * process on the same database and bus, standing in for the worker (domain calls).
 */
export interface Split {
  api: ApiClient;
  token(): Promise<string>;
  endpoints: string[];
  env: Record<string, string>;
  /** The test process's own runtime on the same database and bus (a stand-in worker). */
  worker: Runtime;
  replicas: AppProcess[];
  startReplica(): Promise<{ app: AppProcess; endpoint: string }>;
  enrolledAgent(at?: number): Promise<{ node: { id: string }; agent: AgentSimulator }>;
  stop(): Promise<void>;
}

export const splitAvailable = (): boolean => Boolean(process.env.REDIS_URL && process.env.DATABASE_URL);

const OWNER = { email: 'owner@example.com', password: 'correct horse battery staple' };

export async function startSplit(replicaCount = 2): Promise<Split> {
  const database: TestDatabase = await createTestDatabase();
  const env: Record<string, string> = {
    DATABASE_URL: database.url as string,
    REDIS_URL: process.env.REDIS_URL as string,
    SVC_REDIS_KEY_PREFIX: `svc-split-${randomBytes(5).toString('hex')}:`,
    SVC_INSTALLATION_KEY: randomBytes(32).toString('base64'),
    SVC_LOG_LEVEL: 'info',
    SVC_GRPC_REPLICA_HEARTBEAT_SECONDS: '1',
    SVC_AGENT_COMMAND_TIMEOUT_SECONDS: '5',
    SVC_DATA_DIR: '/nonexistent-split-mode',
  };
  const admin = spawnApp('apps/admin-api/src/main.ts', { ...env, SVC_HTTP_PORT: '0', SVC_HTTP_HOST: '127.0.0.1' });
  const replicas: AppProcess[] = [];
  const agents: AgentSimulator[] = [];
  let worker: Runtime | undefined;
  const stop = async () => {
    for (const a of agents) await a.disconnect().catch(() => {});
    for (const p of [...replicas, admin]) await p.kill();
    await worker?.close();
    await database.destroy();
  };
  try {
    const listening = await admin.waitForLog(/^admin-api listening on/);
    const setup = await admin.waitForLine((l) => l.includes('"setup_token"'), 'the setup token');
    const api = createApiClient(listening.url);
    const created = await api.post('/api/v1/setup', { token: JSON.parse(setup).setup_token, ...OWNER });
    if (created.status !== 201) throw new Error(created.text);
    const config = loadConfig(env);
    const quiet = new Writable({ write: (_c, _e, cb) => cb() });
    worker = await createRuntime(config, { log: createLogger(config, quiet), redisKeyPrefix: env.SVC_REDIS_KEY_PREFIX, migrate: false });
    let cached: { token: string; at: number } | null = null;
    const token = async () => {
      if (!cached || Date.now() - cached.at > 5 * 60_000)
        cached = { token: (await api.post('/api/v1/auth/login', OWNER)).body.access_token, at: Date.now() };
      return cached.token;
    };
    const endpoints: string[] = [];
    const startReplica = async () => {
      const app = spawnApp('apps/control-plane/src/main.ts', { ...env, SVC_GRPC_PORT: '0', SVC_GRPC_HOST: '127.0.0.1' });
      replicas.push(app);
      const line = await app.waitForLog(/^agent gateway listening/);
      const endpoint = `localhost:${line.grpc_port}`;
      endpoints.push(endpoint);
      return { app, endpoint };
    };
    for (let i = 0; i < replicaCount; i++) await startReplica();
    let next = 0;
    return {
      api,
      token,
      endpoints,
      env,
      worker,
      replicas,
      startReplica,
      async enrolledAgent(at?: number) {
        const t = await token();
        const tag = randomBytes(3).toString('hex');
        const node = (await api.post('/api/v1/nodes', { name: `split-${tag}`, address: `${tag}.example.com` }, { token: t })).body;
        const issued = (await api.post(`/api/v1/nodes/${node.id}/enroll-token`, undefined, { token: t })).body;
        // Spread the agents over the replicas unless told where.
        const endpoint = endpoints[(at ?? next++) % endpoints.length] as string;
        const agent = await AgentSimulator.enroll({ endpoint, caCertPem: issued.ca_cert_pem, token: issued.token });
        agents.push(agent);
        return { node, agent };
      },
      stop,
    };
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
}

import { randomBytes } from 'node:crypto';
import type { UsageEntry } from '@svc/proto';
import {
  type ApiClient,
  type AppProcess,
  createApiClient,
  type PrivatePostgres,
  type PrivateRedis,
  privateServicesAvailable,
  type SqlClient,
  spawnApp,
  startPrivatePostgres,
  startPrivateRedis,
  startTcpBalancer,
  type TcpBalancer,
  until,
} from '@svc/testkit';
import { AgentSimulator } from '@svc/testkit/agent-simulator';

/**
 * Split mode on a PostgreSQL and a Redis of the test file's own (so they can be restarted and
 * killed without touching the shared servers other tests use): the admin API, two gateway
 * replicas behind a TCP balancer (what operators put in front of them; agents dial the
 * balancer), and a worker. Agents are simulators that behave as apps/agent does after a stream
 * ends: dial again (the balancer picks a living replica), send their applied revision in Hello
 * and every unacknowledged usage report in order.
 */

/** Fault tests run in the PostgreSQL + Redis run of the suite, on servers of their own. */
export const faultsAvailable = async (): Promise<boolean> =>
  Boolean(process.env.DATABASE_URL && process.env.REDIS_URL) && (await privateServicesAvailable());

const OWNER = { email: 'owner@example.com', password: 'correct horse battery staple' };

export interface FaultSystem {
  pg: PrivatePostgres;
  redis: PrivateRedis;
  /** A client on the private PostgreSQL (reconnect with `sql()` after a restart). */
  sql(): Promise<SqlClient>;
  api: ApiClient;
  token(): Promise<string>;
  admin: AppProcess;
  worker: AppProcess;
  replicas: AppProcess[];
  balancer: TcpBalancer;
  env: Record<string, string>;
  /** Starts (again) the replica at `index`, on its old port, and puts it back in the balancer. */
  startReplica(index: number): Promise<AppProcess>;
  startWorker(): Promise<AppProcess>;
  enrolledAgent(): Promise<{ node: { id: string }; agent: RoamingAgent }>;
  /** Every process started, dead or alive (for the "nothing crashed" checks). */
  processes(): AppProcess[];
  stop(): Promise<void>;
}

export async function startFaultSystem(): Promise<FaultSystem> {
  const pg = await startPrivatePostgres();
  const redis = await startPrivateRedis().catch(async (err) => {
    await pg.destroy();
    throw err;
  });
  const env: Record<string, string> = {
    DATABASE_URL: pg.url,
    REDIS_URL: redis.url,
    SVC_REDIS_KEY_PREFIX: `svc-faults-${randomBytes(4).toString('hex')}:`,
    SVC_INSTALLATION_KEY: randomBytes(32).toString('base64'),
    SVC_LOG_LEVEL: 'info',
    SVC_GRPC_REPLICA_HEARTBEAT_SECONDS: '1',
    SVC_AGENT_COMMAND_TIMEOUT_SECONDS: '5',
    SVC_DATA_DIR: '/nonexistent-fault-tests',
  };
  const all: AppProcess[] = [];
  const agents: RoamingAgent[] = [];
  const clients: SqlClient[] = [];
  const replicas: AppProcess[] = [];
  const replicaPorts: number[] = [];
  let balancer: TcpBalancer | undefined;
  const stop = async () => {
    for (const a of agents) await a.stop().catch(() => {});
    await Promise.all(all.map((p) => p.kill()));
    await balancer?.close();
    for (const c of clients) await c.end().catch(() => {});
    await redis.destroy();
    await pg.destroy();
  };
  try {
    const admin = spawnApp('apps/admin-api/src/main.ts', { ...env, SVC_HTTP_PORT: '0', SVC_HTTP_HOST: '127.0.0.1' });
    all.push(admin);
    // The admin API migrates the database; the others start after it.
    const listening = await admin.waitForLog(/^admin-api listening on/, 60_000);
    const setup = await admin.waitForLine((l) => l.includes('"setup_token"'), 'the setup token');
    const api = createApiClient(listening.url);
    const created = await api.post('/api/v1/setup', { token: JSON.parse(setup).setup_token, ...OWNER });
    if (created.status !== 201) throw new Error(created.text);

    const startReplica = async (index: number) => {
      const port = replicaPorts[index];
      const app = spawnApp('apps/control-plane/src/main.ts', { ...env, SVC_GRPC_PORT: String(port ?? 0), SVC_GRPC_HOST: '127.0.0.1' });
      all.push(app);
      replicas[index] = app;
      const line = await app.waitForLog(/^agent gateway listening/, 60_000);
      replicaPorts[index] = Number(line.grpc_port);
      return app;
    };
    let worker: AppProcess | undefined;
    const startWorker = async () => {
      // Named, so a test can tell the worker's statements from the gateway's in pg_stat_activity.
      const app = spawnApp('apps/control-plane/test/faults/worker-entry.ts', {
        ...env,
        DATABASE_URL: `${pg.url}?application_name=svc-worker`,
      });
      all.push(app);
      worker = app;
      await app.waitForLog(/^worker running/, 60_000);
      return app;
    };
    await Promise.all([startReplica(0), startReplica(1), startWorker()]);
    balancer = await startTcpBalancer(replicaPorts);

    let cached: string | undefined;
    const token = async () => {
      if (cached && (await api.get('/api/v1/auth/me', { token: cached })).status === 200) return cached;
      const res = await api.post('/api/v1/auth/login', OWNER);
      if (res.status !== 200) throw new Error(`login: ${res.status} ${res.text}`);
      cached = res.body.access_token as string;
      return cached;
    };
    const endpoint = `localhost:${balancer.port}`;
    const system: FaultSystem = {
      pg,
      redis,
      async sql() {
        const c = await pg.connect();
        clients.push(c);
        return c;
      },
      api,
      token,
      admin,
      get worker() {
        return worker as AppProcess;
      },
      replicas,
      balancer,
      env,
      startReplica,
      startWorker,
      async enrolledAgent() {
        const t = await token();
        const tag = randomBytes(3).toString('hex');
        const node = (await api.post('/api/v1/nodes', { name: `fault-${tag}`, address: `${tag}.example.com` }, { token: t })).body;
        const issued = (await api.post(`/api/v1/nodes/${node.id}/enroll-token`, undefined, { token: t })).body;
        const sim = await AgentSimulator.enroll({ endpoint, caCertPem: issued.ca_cert_pem, token: issued.token });
        // The enrollment's connection gone first, so the balancer spreads the streams.
        const open = () => replicaPorts.reduce((n, p) => n + (balancer as TcpBalancer).open(p), 0);
        await until('the enrollment connection closed', () => open() === agents.length, 10_000);
        const agent = new RoamingAgent(sim);
        agents.push(agent);
        return { node, agent };
      },
      processes: () => [...all],
      stop,
    };
    return system;
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
}

/**
 * An agent that keeps its stream as apps/agent does: when the stream ends it dials again
 * (every 200 ms here; the real agent backs off 1-60 s), and on every new stream sends the
 * usage reports not yet acknowledged, in order, as the agent's journal does. Reports are
 * numbered from 1 and kept until their UsageAck.
 */
export class RoamingAgent {
  readonly sent = new Map<bigint, UsageEntry[]>();
  /** Streams opened (1 for the first). */
  streams = 0;
  private nextId = 1n;
  private stopped = false;
  private readonly timer: NodeJS.Timeout;

  constructor(readonly sim: AgentSimulator) {
    this.open();
    this.timer = setInterval(() => {
      if (!this.stopped && this.sim.ended !== null) this.open();
    }, 200);
  }

  get nodeId(): string {
    return this.sim.nodeId;
  }

  /** Reports not acknowledged yet. */
  pending(): bigint[] {
    const acked = new Set(this.sim.acks);
    return [...this.sent.keys()].filter((id) => !acked.has(id));
  }

  /** Sends a new report (if a stream is open; else it goes with the next one). */
  report(entries: UsageEntry[]): bigint {
    const id = this.nextId++;
    this.sent.set(id, entries);
    if (this.sim.ended === null) this.sim.send({ usage: { reportId: id, entries } });
    return id;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.sim.disconnect();
  }

  private open(): void {
    this.streams++;
    this.sim.connect();
    for (const id of this.pending()) this.sim.send({ usage: { reportId: id, entries: this.sent.get(id) as UsageEntry[] } });
  }
}

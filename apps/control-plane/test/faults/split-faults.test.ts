import { connect } from 'node:net';
import { type SqlClient, until } from '@svc/testkit';
import { Status } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FaultSystem, faultsAvailable, type RoamingAgent, startFaultSystem } from './fault-system.ts';

/**
 * Issue 18.4: faults in split mode, on a real PostgreSQL and Redis of this file's own (the
 * shared servers other tests use are never touched). The system: admin API, two gateway
 * replicas behind a TCP balancer, a worker; two agents that reconnect as apps/agent does and
 * report usage throughout. After every fault: the processes still run (no crash, no unhandled
 * rejection), every node is back in sync (applied == desired, online), and the usage credited
 * equals what the agents sent, once.
 */

let sys: FaultSystem;
const agents: RoamingAgent[] = [];
let subscriptionId: string;
let profileId: string;
let inboundPort = 20_000;
/** Every report carries this much for the subscription: the sum credited is (reports acknowledged) x this. */
const UP = 1000n;
const DOWN = 1n;

const available = await faultsAvailable();

async function api() {
  return { api: sys.api, token: await sys.token() };
}

/** A new inbound on `nodeId`, in the subscription's access group: bumps the node's desired revision. */
async function changeNode(nodeId: string): Promise<void> {
  const { api: a, token } = await api();
  const inbound = await a.post('/api/v1/inbounds', { node_id: nodeId, profile_id: profileId, port: inboundPort++ }, { token });
  expect(inbound.status, inbound.text).toBe(201);
}

const nodeView = async (id: string) => {
  const { api: a, token } = await api();
  return (await a.get(`/api/v1/nodes/${id}`, { token })).body;
};

/** Every node online, its applied revision its desired one, every report of every agent acknowledged. */
async function everyNodeInSync(what: string, timeoutMs = 30_000): Promise<void> {
  await until(
    `${what}: every node in sync`,
    async () => {
      for (const a of agents) {
        const v = await nodeView(a.nodeId).catch(() => null);
        if (!v || v.connectivity !== 'online' || v.applied_revision !== v.desired_revision) return false;
        if (a.pending().length > 0) return false;
      }
      return true;
    },
    timeoutMs,
  );
}

/** What the subscription's counters hold equals what the agents had acknowledged: nothing lost, nothing twice. */
async function usageMatchesReports(): Promise<void> {
  const sql = await sys.sql();
  try {
    for (const a of agents) expect(a.pending()).toEqual([]);
    const sent = agents.reduce((n, a) => n + a.sent.size, 0);
    // An acknowledgement means staged; a surviving replica's fold credits what a stopped one left.
    for (const end = Date.now() + 15_000; ; ) {
      const { rows: staged } = await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM usage_inbox');
      if (staged[0]?.n === 0 || Date.now() > end) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const { rows } = await sql.query<{ used: string; up: string; down: string }>(
      'SELECT used_bytes::text AS used, period_uplink_bytes::text AS up, period_downlink_bytes::text AS down FROM subscription_counters WHERE subscription_id = $1',
      [subscriptionId],
    );
    expect(rows[0]).toEqual({ used: String(BigInt(sent) * (UP + DOWN)), up: String(BigInt(sent) * UP), down: String(BigInt(sent) * DOWN) });
    const hourly = await sql.query<{ total: string }>(
      'SELECT (sum(uplink_bytes) + sum(downlink_bytes))::text AS total FROM usage_hourly WHERE subscription_id = $1',
      [subscriptionId],
    );
    expect(hourly.rows[0]?.total).toBe(String(BigInt(sent) * (UP + DOWN)));
  } finally {
    await sql.end();
  }
}

let sweptSeq = 0;
/** The worker still runs its schedule: a subscription made due is expired by the sweep (every second in these tests). */
async function theWorkerSweeps(what: string): Promise<void> {
  const { api: a, token } = await api();
  const client = await a.post('/api/v1/clients', { email: `swept-${sweptSeq++}@example.com` }, { token });
  const sub = await a.post(
    '/api/v1/subscriptions',
    { client_id: client.body.id, access_group_ids: [], expires_at: new Date(Date.now() + 3_600_000).toISOString() },
    { token },
  );
  expect(sub.status, sub.text).toBe(201);
  const sql = await sys.sql();
  try {
    await sql.query(`UPDATE subscriptions SET expires_at = now() - interval '1 second' WHERE id = $1`, [sub.body.id]);
    await until(
      `${what}: the worker's sweep expires a due subscription`,
      async () => (await sql.query('SELECT status FROM subscriptions WHERE id = $1', [sub.body.id])).rows[0]?.status === 'expired',
      20_000,
    );
  } finally {
    await sql.end();
  }
}

const reportFromEach = () => {
  for (const a of agents) a.report([{ subscriptionId, uplinkBytes: UP, downlinkBytes: DOWN }]);
};

/** No process exited, and none logged an uncaught exception or unhandled rejection. */
function nothingCrashed(): void {
  for (const p of sys.processes()) {
    if (p.child.exitCode !== null || p.child.signalCode !== null) continue;
    expect(p.stderr()).not.toMatch(/Unhandled|unhandled|uncaught|Uncaught/);
  }
  for (const p of [sys.admin, sys.worker, ...sys.replicas]) {
    expect(p.child.exitCode, p.stderr()).toBeNull();
    expect(p.child.signalCode).toBeNull();
  }
}

describe.skipIf(!available)('faults in split mode on a PostgreSQL and Redis of our own (issue 18.4)', () => {
  beforeAll(async () => {
    sys = await startFaultSystem();
    const { api: a, token } = await api();
    profileId = (
      await a.post(
        '/api/v1/inbound-profiles',
        { name: 'faults', protocol: 'vless', stream: { network: 'tcp', security: 'none' } },
        { token },
      )
    ).body.id;
    const inboundIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      const { node, agent } = await sys.enrolledAgent();
      agents.push(agent);
      const inbound = await a.post('/api/v1/inbounds', { node_id: node.id, profile_id: profileId, port: inboundPort++ }, { token });
      expect(inbound.status, inbound.text).toBe(201);
      inboundIds.push(inbound.body.id);
    }
    const group = await a.post('/api/v1/access-groups', { name: 'faults', inbound_ids: inboundIds }, { token });
    const client = await a.post('/api/v1/clients', { email: 'faults@example.com' }, { token });
    const sub = await a.post('/api/v1/subscriptions', { client_id: client.body.id, access_group_ids: [group.body.id] }, { token });
    expect(sub.status, sub.text).toBe(201);
    subscriptionId = sub.body.id;
    reportFromEach();
    await everyNodeInSync('at start');
    // Both replicas hold a stream (the balancer takes turns).
    expect(sys.balancer.open(sys.balancer.backends[0] as number)).toBe(1);
    expect(sys.balancer.open(sys.balancer.backends[1] as number)).toBe(1);
  }, 180_000);
  afterAll(() => sys?.stop());

  for (const how of ['shutdown', 'kill9'] as const) {
    it(`Redis stopped (${how}) and started: sign-in 503 while it is away; commands and node changes cross processes again, sign-in is not refused, the worker's schedules run again, nothing crashed`, async () => {
      await sys.redis.stop(how);
      reportFromEach();
      // Sign-in is rate limited in Redis: while it is away, 503 problem+json (not counted, not a 500).
      const down = await sys.api.post('/api/v1/auth/login', { email: 'owner@example.com', password: 'correct horse battery staple' });
      expect(down.status, down.text).toBe(503);
      expect(down.headers.get('content-type')).toContain('application/problem+json');
      expect(down.headers.get('retry-after')).toBe('5');
      await sys.redis.start();
      // A command goes admin -> Redis -> the replica holding the stream -> the agent and back:
      // accepted (202) once every process has its Redis connections back.
      const target = agents[0] as RoamingAgent;
      const restarts = target.sim.restarts;
      await until(
        'restart-xray accepted after the Redis restart',
        async () => {
          const { api: a, token } = await api();
          return (await a.post(`/api/v1/nodes/${target.nodeId}/restart-xray`, undefined, { token })).status === 202;
        },
        20_000,
      );
      await target.sim.waitFor(() => target.sim.restarts > restarts, 10_000, 'the restart command');
      for (const a of agents) await changeNode(a.nodeId);
      reportFromEach();
      await everyNodeInSync(`after Redis ${how}`);
      // Sign-in's rate limit window starts empty: nothing refused.
      for (let i = 0; i < 3; i++)
        expect(
          (await sys.api.post('/api/v1/auth/login', { email: 'owner@example.com', password: 'correct horse battery staple' })).status,
        ).toBe(200);
      await usageMatchesReports();
      // The job schedules were in the Redis that came back empty: written again on reconnect.
      await theWorkerSweeps(`after Redis ${how}`);
      nothingCrashed();
    });
  }

  for (const mode of ['fast', 'immediate'] as const) {
    it(`PostgreSQL restarted (-m ${mode}): the API answers 503 problem+json while it is down, then recovers; every node back in sync, usage once, the worker resumes`, async () => {
      const { token } = await api();
      await sys.pg.stop(mode);
      const down = await sys.api.get('/api/v1/nodes', { token });
      expect(down.status, down.text).toBe(503);
      expect(down.headers.get('content-type')).toContain('application/problem+json');
      expect(down.body).toMatchObject({ status: 503 });
      expect(down.text).not.toMatch(/at .*\.ts:\d+/);
      // Reports sent while it is down are not acknowledged; the agents send them again.
      reportFromEach();
      await sys.pg.start();
      await until('the API answers again', async () => (await sys.api.get('/api/v1/nodes', { token })).status === 200, 20_000);
      for (const a of agents) await changeNode(a.nodeId);
      reportFromEach();
      await everyNodeInSync(`after PostgreSQL -m ${mode}`);
      await usageMatchesReports();
      await theWorkerSweeps(`after PostgreSQL -m ${mode}`);
      nothingCrashed();
    });
  }

  it('kill -9 of a gateway replica holding streams: its agents move to the other, every node back in sync, no usage lost or doubled', async () => {
    const [first, second] = sys.balancer.backends as [number, number];
    const victim = sys.balancer.open(first) > 0 ? 0 : 1;
    const survivorPort = victim === 0 ? second : first;
    const held = sys.balancer.open(victim === 0 ? first : second);
    expect(held).toBeGreaterThan(0);
    const streamsBefore = agents.reduce((n, a) => n + a.streams, 0);
    for (let i = 0; i < 3; i++) reportFromEach();
    await sys.replicas[victim]?.kill();
    for (let i = 0; i < 3; i++) reportFromEach();
    await until('every stream on the surviving replica', () => sys.balancer.open(survivorPort) === agents.length, 20_000);
    expect(agents.reduce((n, a) => n + a.streams, 0)).toBeGreaterThanOrEqual(streamsBefore + held);
    for (const a of agents) await changeNode(a.nodeId);
    await everyNodeInSync('after the replica was killed');
    await usageMatchesReports();
    // The replica comes back (same port) and takes its turn in the balancer again.
    await sys.startReplica(victim);
    nothingCrashed();
  });

  it('PostgreSQL down for longer than the replicas staleness window: the replica back first does not take the others for dead, no stream is ended', async () => {
    await everyNodeInSync('before the long outage');
    const streams = agents.map((a) => a.streams);
    await sys.pg.stop('fast');
    // The fault itself is time: every replica misses more heartbeats than the staleness window
    // (4 of 1 s here) allows.
    await new Promise((r) => setTimeout(r, 5_000));
    await sys.pg.start();
    // A replica holding streams comes back last: its heartbeats wait on its row (held here)
    // while the other beats twice after the outage. Counting silence from before the outage,
    // the other would take it for dead and set its nodes offline (their streams then end
    // 'replaced').
    const db = await sys.sql();
    const lock = await sys.sql();
    try {
      const late = (await db.query<{ id: string }>(`SELECT stream_replica AS id FROM nodes WHERE stream_replica IS NOT NULL LIMIT 1`))
        .rows[0]?.id as string;
      expect(late).toBeTruthy();
      const back = (await db.query<{ now: Date }>('SELECT now()')).rows[0]?.now as Date;
      await lock.query('BEGIN');
      await lock.query('SELECT id FROM gateway_replicas WHERE id = $1 FOR UPDATE', [late]);
      await until(
        'the other replica beat twice after the outage',
        async () =>
          (
            await db.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM gateway_replicas WHERE id <> $1 AND heartbeat_at > $2::timestamptz + interval '1.5 seconds'`,
              [late, back],
            )
          ).rows[0]?.n === 1,
        20_000,
      );
      await lock.query('ROLLBACK');
      // Every replica has beaten (and swept, or chosen not to) well past the staleness window since.
      await until(
        'every replica beat past the staleness window after the outage',
        async () =>
          (
            await db.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM gateway_replicas WHERE heartbeat_at > $1::timestamptz + interval '6 seconds'`,
              [back],
            )
          ).rows[0]?.n === 2,
        30_000,
      );
    } finally {
      await lock.query('ROLLBACK').catch(() => {});
      await lock.end();
      await db.end();
    }
    expect(agents.map((a) => a.streams)).toEqual(streams);
    for (const a of agents) expect((await nodeView(a.nodeId)).connectivity).toBe('online');
    await everyNodeInSync('after the long outage');
    nothingCrashed();
  });

  it('kill -9 of the worker in the middle of the expiry sweep: the sweep runs again after restart, its effect once', async () => {
    const node = agents[0] as RoamingAgent;
    const { api: a, token } = await api();
    const client = await a.post('/api/v1/clients', { email: 'expiring@example.com' }, { token });
    const groupOfNode = (await a.get(`/api/v1/subscriptions/${subscriptionId}`, { token })).body.access_group_ids;
    const expiring = await a.post(
      '/api/v1/subscriptions',
      { client_id: client.body.id, access_group_ids: groupOfNode, expires_at: new Date(Date.now() + 3_600_000).toISOString() },
      { token },
    );
    expect(expiring.status, expiring.text).toBe(201);
    await everyNodeInSync('before the sweep');
    const revisionBefore = (await nodeView(node.nodeId)).desired_revision;

    // The sweep's unit of work marks the subscription expired, then waits on the node's row
    // (held here) to bump its revision, inside its transaction: killed there.
    await sweepBlockedOnNode(node.nodeId, expiring.body.id, async () => {
      await sys.worker.kill();
    });
    await sys.startWorker();
    const sql = await sys.sql();
    try {
      await until(
        'the subscription expired',
        async () => (await sql.query('SELECT status FROM subscriptions WHERE id = $1', [expiring.body.id])).rows[0]?.status === 'expired',
        20_000,
      );
      const audit = await sql.query(`SELECT count(*)::int AS n FROM audit_log WHERE action = 'subscription.expired' AND entity_id = $1`, [
        expiring.body.id,
      ]);
      expect(audit.rows[0]?.n).toBe(1);
    } finally {
      await sql.end();
    }
    expect((await nodeView(node.nodeId)).desired_revision).toBe(revisionBefore + 1);
    await everyNodeInSync('after the sweep');
    nothingCrashed();
  });

  it('SIGTERM to a gateway replica: its agents are told UNAVAILABLE and reconnect to the other at once, exit 0', async () => {
    const [first, second] = sys.balancer.backends as [number, number];
    const victim = sys.balancer.open(first) > 0 ? 0 : 1;
    const app = sys.replicas[victim] as (typeof sys.replicas)[number];
    const survivorPort = victim === 0 ? second : first;
    // How each agent's stream on the stopping replica ended (the simulator keeps only the last end).
    const replicaId = (await app.waitForLog(/^agent gateway listening/)).replica as string;
    const sql = await sys.sql();
    const held = await sql.query<{ id: string }>('SELECT id FROM nodes WHERE stream_replica = $1', [replicaId]).finally(() => sql.end());
    const onVictim = agents.filter((a) => held.rows.some((r) => r.id === a.nodeId));
    expect(onVictim.length).toBeGreaterThan(0);
    const endings: unknown[] = [];
    for (const a of onVictim)
      a.sim.waitForEnd(20_000).then(
        (e) => endings.push(e.code),
        (err) => endings.push(String(err)),
      );
    app.child.kill('SIGTERM');
    expect(await app.exited, `${app.lines.slice(-20).join('\n')}\n${app.stderr()}`).toEqual({ code: 0, signal: null });
    await until('every stream on the other replica', () => sys.balancer.open(survivorPort) === agents.length, 20_000);
    expect(endings).toEqual(onVictim.map(() => Status.UNAVAILABLE));
    reportFromEach();
    await everyNodeInSync('after the replica stopped');
    await usageMatchesReports();
  });

  it('SIGTERM to the worker in the middle of a job: the job finishes, then the worker exits 0', async () => {
    const node = agents[0] as RoamingAgent;
    const { api: a, token } = await api();
    const client = await a.post('/api/v1/clients', { email: 'draining@example.com' }, { token });
    const groups = (await a.get(`/api/v1/subscriptions/${subscriptionId}`, { token })).body.access_group_ids;
    const sub = await a.post(
      '/api/v1/subscriptions',
      { client_id: client.body.id, access_group_ids: groups, expires_at: new Date(Date.now() + 3_600_000).toISOString() },
      { token },
    );
    expect(sub.status, sub.text).toBe(201);
    await everyNodeInSync('before the sweep');
    const worker = sys.worker;
    await sweepBlockedOnNode(node.nodeId, sub.body.id, async () => {
      worker.child.kill('SIGTERM');
      // Stopping, and still there: it waits for its job, which waits for the row.
      await worker.waitForLog(/^stopping$/, 10_000);
      expect(worker.child.exitCode).toBeNull();
    });
    expect(await worker.exited, `${worker.lines.slice(-20).join('\n')}\n${worker.stderr()}`).toEqual({ code: 0, signal: null });
    // The job it finished is in the database (had it left the job, its transaction would have
    // rolled back with its connection); no other worker ran it.
    const sql = await sys.sql();
    try {
      expect((await sql.query('SELECT status FROM subscriptions WHERE id = $1', [sub.body.id])).rows[0]?.status).toBe('expired');
    } finally {
      await sql.end();
    }
  });

  it('SIGTERM to the admin API: a request in flight completes, new connections are refused, exit 0', async () => {
    const url = new URL(sys.api.baseUrl);
    const port = Number(url.port);
    const body = JSON.stringify({ email: 'owner@example.com', password: 'correct horse battery staple' });
    const socket = connect({ port, host: '127.0.0.1' });
    await new Promise<void>((r) => socket.once('connect', () => r()));
    let answer = '';
    socket.setEncoding('utf8').on('data', (d: string) => {
      answer += d;
    });
    const half = Math.floor(body.length / 2);
    socket.write(
      `POST /api/v1/auth/login HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, half)}`,
    );
    const exited = sys.admin.exited;
    sys.admin.child.kill('SIGTERM');
    await until('new connections refused', () => refused(port), 10_000);
    socket.write(body.slice(half));
    await until('the request in flight answered', () => answer.includes('access_token'), 10_000);
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    // Its keep-alive connection is closed by the server once the answer is out.
    await until('the drained connection closed', () => socket.readableEnded || socket.destroyed, 10_000);
    expect(await exited, `${sys.admin.lines.slice(-20).join('\n')}\n${sys.admin.stderr()}`).toEqual({ code: 0, signal: null });
    socket.destroy();
  });
});

/**
 * Holds the node's row (FOR UPDATE) and makes the subscription due to expire: the worker's
 * next sweep marks it expired and then waits on the row inside its transaction. `during` runs
 * while the sweep waits; the row is let go after it (also when it throws).
 */
async function sweepBlockedOnNode(nodeId: string, subscription: string, during: () => Promise<void>): Promise<void> {
  const lock = await sys.sql();
  const other = await sys.sql();
  try {
    await lock.query('BEGIN');
    await lock.query('SELECT id FROM nodes WHERE id = $1 FOR UPDATE', [nodeId]);
    await other.query(`UPDATE subscriptions SET expires_at = now() - interval '1 second' WHERE id = $1`, [subscription]);
    await sweepWaitingOnNodeRow(other);
    await during();
  } finally {
    await lock.query('ROLLBACK').catch(() => {});
    await lock.end();
    await other.end();
  }
}

/** Until a statement of the worker waits for a lock on a node row (the test holds it). */
async function sweepWaitingOnNodeRow(sql: SqlClient): Promise<void> {
  try {
    await until(
      'the sweep waiting on the node row',
      async () =>
        (
          await sql.query(
            `SELECT 1 FROM pg_stat_activity WHERE application_name = 'svc-worker' AND wait_event_type = 'Lock' AND state = 'active'`,
          )
        ).rows.length > 0,
      20_000,
    );
  } catch (err) {
    const activity = await sql.query(
      "SELECT application_name, state, wait_event_type, left(query, 200) AS q FROM pg_stat_activity WHERE datname = 'postgres'",
    );
    throw new Error(
      `${(err as Error).message}\nactivity: ${JSON.stringify(activity.rows)}\nworker: ${sys.worker.lines.slice(-15).join('\n')}\n${sys.worker.stderr()}`,
    );
  }
}

/** Whether a TCP connection to 127.0.0.1:port is refused now. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
}

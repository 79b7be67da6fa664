import { ChannelCredentials } from '@grpc/grpc-js';
import { type Identity, SyncSession } from '@svc/agent';
import { type AgentMessage, ControlPlaneDefinition, type Hello } from '@svc/proto';
import type { AgentSimulator } from '@svc/testkit/agent-simulator';
import { ClientError, createChannel, createClient, Status } from 'nice-grpc';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AdmissionLine } from '../src/admission-line.ts';
import { compiledSource, type SnapshotSource } from '../src/desired-state-source.ts';
import { type ControlPlane, createControlPlane } from '../src/server.ts';
import { eventually, type Gateway, nodeRow, startGateway } from './harness.ts';

// Issue 17.3, a reconnect storm: a Hello that is up to date costs no snapshot; an admission
// line bounds how many streams open a second and at once, serves them in order, turns away
// (with when to come back) those it cannot serve soon, and cannot be filled by strangers.

let g: Gateway;
/** Every snapshot the gateway compiled, by node. */
const compiled: string[] = [];
let inner: SnapshotSource | undefined;
const counting: SnapshotSource = (nodeId) => {
  compiled.push(nodeId);
  inner ??= compiledSource(g.s.deps);
  return inner(nodeId);
};
const extra: ControlPlane[] = [];
beforeAll(async () => {
  // A fleet is enrolled here: the per-IP enrollment limit (30 a minute) lifted.
  const lifted = { limit: 1000, window_seconds: 60 };
  g = await startGateway({
    server: { config: { rate_limits: { enroll: { per_ip: lifted, per_subject: lifted } } } },
    gateway: { snapshots: counting },
  });
});
afterAll(async () => {
  for (const x of extra) await x.stop().catch(() => {});
  await g.stop();
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** A gateway of the same installation with these admission limits. */
async function gatewayWith(admission: { perSecond: number; concurrency: number; maxWaitMs: number }) {
  const gateway = createControlPlane(g.s.deps, { host: '127.0.0.1', port: 0, tlsHosts: ['localhost', '127.0.0.1'], admission });
  extra.push(gateway);
  const { port } = await gateway.start();
  return `localhost:${port}`;
}

const online = (a: AgentSimulator | string, session?: string | null) =>
  eventually(async () => {
    const row = await nodeRow(g, typeof a === 'string' ? a : a.nodeId);
    expect(row.connectivity).toBe('online');
    if (session !== undefined) expect(row.stream_session).not.toBe(session);
  }, 30_000);

/** The real agent's Sync session (apps/agent), applying every DesiredState at once; what ended each stream is kept. */
function realAgent(a: AgentSimulator, endpoint: string) {
  const identity: Identity = { nodeId: a.nodeId, server: endpoint, caCertPem: a.opts.caCertPem, certPem: a.certPem, keyPem: a.keyPem };
  const ends: string[] = [];
  let applied = 0n;
  const session: SyncSession = new SyncSession(
    () => identity,
    {
      hello: async (): Promise<Hello> => ({
        hostname: 'h',
        os: 'linux',
        arch: 'x64',
        agentVersion: '1.0.0',
        xrayVersion: '25.1.1',
        appliedRevision: applied,
      }),
      opened: () => {},
      message: (m) => {
        if (!m.desiredState) return;
        applied = m.desiredState.revision;
        session.send({ applyResult: { revision: applied, success: true, error: '' } });
      },
      closed: (why) => ends.push(why),
    },
    g.s.deps.log as never,
  );
  const running = session.run();
  return {
    ends,
    stop: () => {
      session.stop();
      return running;
    },
  };
}

describe('a Hello that is up to date (issue 17.3)', () => {
  it('a Hello with the applied revision equal to the desired one gets no DesiredState, and no snapshot is compiled for it', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect();
    await agent.waitForRevision(1n);
    await agent.disconnect();
    expect(agent.appliedRevision).toBe(BigInt((await nodeRow(g, node.id)).desired_revision));
    const before = (await nodeRow(g, node.id)).stream_session;
    const compiledBefore = compiled.filter((id) => id === node.id).length;
    const received = agent.desiredStates.length;

    agent.connect();
    await online(agent, before);
    // Anything the opening would have queued went out before the answer to a later message:
    // a snapshot due on open is compiled by the writer as soon as the handler starts.
    await agent.sendUsage(1n, []);
    expect(agent.desiredStates.length).toBe(received);
    expect(compiled.filter((id) => id === node.id).length).toBe(compiledBefore);
    await agent.disconnect();
  });

  it('a Hello behind the desired revision is answered with the DesiredState (spec 3.5)', async () => {
    const { agent } = await g.enrolledAgent();
    agent.connect();
    await agent.waitForRevision(1n);
    await agent.disconnect();
    const received = agent.desiredStates.length;
    agent.connect({ appliedRevision: 0n });
    await agent.waitFor(() => agent.desiredStates.length > received, 10_000, 'a DesiredState');
    await agent.disconnect();
  });
});

describe('admission line (issue 17.3): a reconnecting fleet is admitted at a bounded rate, and every agent gets in', () => {
  it('admissions start at most perSecond a second and concurrency at once; every agent of the fleet is admitted', async () => {
    const endpoint = await gatewayWith({ perSecond: 10, concurrency: 2, maxWaitMs: 60_000 });
    const agents = await Promise.all(Array.from({ length: 24 }, () => g.enrolledAgent()));
    const admittedAt: number[] = [];
    let inFlight = 0;
    let most = 0;
    const enter = AdmissionLine.prototype.enter;
    vi.spyOn(AdmissionLine.prototype, 'enter').mockImplementation(async function (this: AdmissionLine, key, signal) {
      const release = await enter.call(this, key, signal);
      admittedAt.push(performance.now());
      most = Math.max(most, ++inFlight);
      return () => {
        inFlight--;
        release();
      };
    });
    for (const { agent } of agents) {
      agent.opts.endpoint = endpoint;
      agent.connect();
    }
    for (const { agent } of agents) await online(agent);
    expect(admittedAt.length).toBe(24);
    expect(most).toBeLessThanOrEqual(2);
    // Within any second: the rate, plus the burst (a tenth of a second's worth).
    for (const t of admittedAt) expect(admittedAt.filter((u) => u >= t && u < t + 1000).length).toBeLessThanOrEqual(11);
    for (const { agent } of agents) await agent.disconnect();
  });

  it('an agent the line cannot serve soon is turned away UNAVAILABLE with grpc-retry-pushback-ms; the real agent comes back then and gets in', async () => {
    const endpoint = await gatewayWith({ perSecond: 2, concurrency: 1, maxWaitMs: 1000 });
    const agents = await Promise.all(Array.from({ length: 8 }, () => g.enrolledAgent()));
    const running = agents.map(({ agent }) => realAgent(agent, endpoint));
    for (const { agent } of agents) await online(agent);
    const turnedAway = running.flatMap((r) => r.ends).filter((why) => why.startsWith('UNAVAILABLE'));
    expect(turnedAway.length).toBeGreaterThan(0);
    expect(turnedAway[0]).toContain('come back in');
    await Promise.all(running.map((r) => r.stop()));
  });

  it('the retry hint reaches the agent as the grpc-retry-pushback-ms trailer', async () => {
    const endpoint = await gatewayWith({ perSecond: 1, concurrency: 1, maxWaitMs: 1000 });
    const agents = await Promise.all(Array.from({ length: 6 }, () => g.enrolledAgent()));
    for (const { agent } of agents) {
      agent.opts.endpoint = endpoint;
      agent.connect();
    }
    await eventually(async () => expect(agents.some(({ agent }) => agent.ended?.code === Status.UNAVAILABLE)).toBe(true), 30_000);
    const away = agents.find(({ agent }) => agent.ended?.code === Status.UNAVAILABLE)?.agent;
    expect(Number(away?.ended?.retryPushbackMs)).toBeGreaterThan(1000);
    for (const { agent } of agents) await agent.disconnect();
  });

  it('Syncs without a verified certificate never take a place in line: an enrolled agent arriving after a flood of them is not turned away', async () => {
    const endpoint = await gatewayWith({ perSecond: 1, concurrency: 1, maxWaitMs: 1000 });
    const stranger = ChannelCredentials.createSsl(Buffer.from(g.caCertPem));
    const hello: AgentMessage = {
      hello: { hostname: 'h', os: 'linux', arch: 'x64', agentVersion: '1.0.0', xrayVersion: '25.1.1', appliedRevision: 0n },
    };
    const flood = await Promise.all(
      Array.from({ length: 30 }, async () => {
        const channel = createChannel(endpoint, stranger);
        try {
          async function* out() {
            yield hello;
          }
          for await (const _ of createClient(ControlPlaneDefinition, channel).sync(out())) {
            // drain
          }
          return 'OK';
        } catch (err) {
          return err instanceof ClientError ? Status[err.code] : String(err);
        } finally {
          channel.close();
        }
      }),
    );
    expect(new Set(flood)).toEqual(new Set(['UNAUTHENTICATED']));
    const { agent } = await g.enrolledAgent();
    agent.opts.endpoint = endpoint;
    agent.connect();
    await online(agent);
    expect(agent.ended).toBeNull();
    await agent.disconnect();
  });
});

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ShareLink } from '@svc/testkit';
import {
  type AppProcess,
  type ControlPlane,
  createFleetForProtocols,
  type EnrollTokenAnswer,
  type Fleet,
  type FleetProtocol,
  spawnApp,
  startControlPlane,
  v2rayAvailable,
  v2rayClientFromLink,
} from '@svc/testkit';
import { freePort, startV2ray } from '@svc/testkit/engine-process';

/**
 * The whole loop as an operator and a customer meet it: the control plane (`svc start`) and the
 * agent (`svc-agent enroll`, `svc-agent run`) as real processes, Debian's v2ray as the engine,
 * the fleet made through the admin REST API, and v2ray clients built from the links /sub serves.
 */
export const v2ray = v2rayAvailable();
export const skipReason = v2ray.available ? null : v2ray.reason;

const AGENT = 'apps/agent/src/main.ts';

export interface Loop {
  cp: ControlPlane;
  fleet: Fleet;
  stateDir: string;
  agent: AppProcess;
  /** Starts `svc-agent run` again (after a kill). */
  restartAgent(): Promise<void>;
  stop(): Promise<void>;
}

export const agentEnv = (stateDir: string): Record<string, string> => ({
  SVC_AGENT_STATE_DIR: stateDir,
  SVC_AGENT_ENGINE_BIN: 'v2ray',
  SVC_AGENT_ENGINE_API: 'v2ray',
  SVC_AGENT_USAGE_INTERVAL_SECONDS: '1',
  SVC_AGENT_STATUS_INTERVAL_SECONDS: '2',
  SVC_AGENT_LOG_LEVEL: 'debug',
  // Tests run as root on the host: a capped user would have the host's default-route device
  // shaped. The speed-cap tests shape veth devices in namespaces of their own.
  SVC_AGENT_SHAPE_DEVICES: 'off',
});

/**
 * Control plane, a node with an inbound per protocol (on free ports), the agent enrolled and
 * running, the node applied. `env`: more of the agent's environment (a shorter device grace).
 */
export async function startLoop(protocols: FleetProtocol[], env: Record<string, string> = {}): Promise<Loop> {
  const cp = await startControlPlane();
  const stateDir = await mkdtemp(join(tmpdir(), 'svc-agent-e2e-'));
  let agent: AppProcess | undefined;
  // Whatever fails on the way stops what was started: a control plane left running outlives the suite.
  const abandon = async () => {
    await agent?.stop();
    await killEngine(stateDir).catch(() => {});
    await cp.stop();
    await rm(stateDir, { recursive: true, force: true });
  };
  try {
    const ports: Partial<Record<FleetProtocol, number>> = {};
    for (const p of protocols) ports[p] = await freePort();
    const fleet = await createFleetForProtocols(cp.api, { node: { address: '127.0.0.1' }, ports });
    await enrollAgent(AGENT, stateDir, fleet.enroll);
    agent = spawnApp(AGENT, { ...agentEnv(stateDir), ...env }, ['run']);
    return await running(cp, fleet, stateDir, agent, env);
  } catch (err) {
    await abandon().catch(() => {});
    throw err;
  }
}

async function running(
  cp: ControlPlane,
  fleet: Loop['fleet'],
  stateDir: string,
  first: AppProcess,
  env: Record<string, string> = {},
): Promise<Loop> {
  let agent = first;
  const loop: Loop = {
    cp,
    fleet,
    stateDir,
    get agent() {
      return agent;
    },
    async restartAgent() {
      agent = spawnApp(AGENT, { ...agentEnv(stateDir), ...env }, ['run']);
      await agent.waitForLog(/^agent started$/);
    },
    async stop() {
      await agent.stop();
      await killEngine(stateDir);
      await cp.stop();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
  await waitForApplied(loop);
  return loop;
}

/**
 * `svc-agent enroll` of the agent at `entry` (source or a build) with the node's token; throws
 * with its output when it fails. `--token T` as the panel prints it; `joined` passes
 * `--token=T`, for the 0.1.x agent, which took a token starting with '-' (one in 64) for an
 * option (fixed in 0.2.0, 482d1e2).
 */
export async function enrollAgent(
  entry: string,
  stateDir: string,
  token: EnrollTokenAnswer,
  opts: { joined?: boolean } = {},
): Promise<void> {
  const tokenArgs = opts.joined ? [`--token=${token.token}`] : ['--token', token.token];
  const enroll = spawnApp(entry, agentEnv(stateDir), [
    'enroll',
    '--server',
    token.grpc_endpoint,
    ...tokenArgs,
    '--ca-sha256',
    token.ca_cert_sha256,
  ]);
  const enrolled = await enroll.exited;
  if (enrolled.code !== 0) throw new Error(`svc-agent enroll exited ${enrolled.code}:\n${enroll.lines.join('\n')}\n${enroll.stderr()}`);
}

/** The node is online and has applied its desired revision. */
export async function waitForApplied(loop: Loop, timeoutMs = 45_000): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, any> = {};
  while (Date.now() < deadline) {
    const res = await loop.cp.api.get(`/api/v1/nodes/${loop.fleet.node.id}`);
    last = res.body;
    if (last.connectivity === 'online' && last.applied_revision >= last.desired_revision && last.applied_revision > 0) return last;
    await sleep(250);
  }
  throw new Error(`node not applied within ${timeoutMs} ms: ${JSON.stringify(last)}\nagent:\n${loop.agent.lines.slice(-40).join('\n')}`);
}

/** The engine the agent runs (engine/engine.json in its state directory). */
export async function enginePid(stateDir: string): Promise<number | null> {
  try {
    return (JSON.parse(await readFile(join(stateDir, 'engine', 'engine.json'), 'utf8')) as { pid: number }).pid;
  } catch {
    return null;
  }
}

export async function killEngine(stateDir: string): Promise<void> {
  const pid = await enginePid(stateDir);
  if (pid) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns a value that is not undefined. */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await sleep(250);
  }
  throw new Error(`${what} not reached within ${timeoutMs} ms${last ? ` (last error: ${(last as Error).message})` : ''}`);
}

/** A v2ray client built from a share link: its local HTTP proxy port. */
export async function clientFor(link: ShareLink): Promise<{ port: number; stop(): Promise<void> }> {
  const port = await freePort();
  const engine = await startV2ray(v2rayClientFromLink(link, { httpProxyPort: port, allowInsecure: true }), {
    waitForPorts: [port],
    name: `client-${link.protocol}`,
  });
  return {
    port,
    stop: async () => {
      await engine.stop();
    },
  };
}

/**
 * The destination of the tests' traffic, counting at the socket what crossed it: what the engine
 * relayed for a user is exactly what this server read (uplink) and wrote (downlink).
 * GET /bytes/<n> answers n bytes; GET /stream sends 1 KiB every 50 ms until the connection ends.
 */
export interface CountingServer {
  url: string;
  /** Bytes of finished connections. */
  totals(): { uplink: number; downlink: number };
  openStreams(): number;
  close(): Promise<void>;
}

export async function startCountingServer(): Promise<CountingServer> {
  let uplink = 0;
  let downlink = 0;
  let streams = 0;
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    req.resume();
    req.on('end', () => {
      if (url.startsWith('/bytes/')) {
        const n = Math.min(Number(url.slice(7)) || 0, 64 * 1024 * 1024);
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(n), connection: 'close' });
        res.end(Buffer.alloc(n, 120));
      } else if (url === '/stream') {
        streams++;
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const t = setInterval(() => res.write(Buffer.alloc(1024, 121)), 50);
        res.on('close', () => {
          clearInterval(t);
          streams--;
        });
      } else {
        res.writeHead(200, { connection: 'close' });
        res.end('ok');
      }
    });
  });
  server.on('connection', (s) =>
    s.on('close', () => {
      uplink += s.bytesRead;
      downlink += s.bytesWritten;
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    totals: () => ({ uplink, downlink }),
    openStreams: () => streams,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

import { mountAdminApi } from '@svc/admin-api';
import { login, OWNER, setupOwner, startTestServer, type TestServer, type TestServerOptions } from '@svc/testkit';
import { AgentSimulator } from '@svc/testkit/agent-simulator';
import { type ControlPlane, type ControlPlaneOptions, createControlPlane } from '../src/server.ts';

/** The admin API and the agent gateway in one process over the test database (all-in-one). */
export interface Gateway {
  s: TestServer;
  gateway: ControlPlane;
  endpoint: string;
  caCertPem: string;
  token(): Promise<string>;
  /** A node created through the admin API, with an agent enrolled for it. */
  enrolledAgent(opts?: { name?: string }): Promise<{ node: { id: string; name: string }; agent: AgentSimulator }>;
  /** A node with its one-time token (not enrolled yet). */
  nodeWithToken(): Promise<{ node: { id: string }; enrollToken: string }>;
  stop(): Promise<void>;
}

export async function startGateway(
  opts: {
    server?: Omit<TestServerOptions, 'mount'>;
    gateway?: Partial<ControlPlaneOptions>;
    /** The HTTP surfaces; default the admin API alone (a test of links mounts the portal beside it). */
    mount?: TestServerOptions['mount'];
  } = {},
): Promise<Gateway> {
  const s = await startTestServer({ ...opts.server, mount: opts.mount ?? mountAdminApi });
  await setupOwner(s);
  const gateway = createControlPlane(s.deps, { host: '127.0.0.1', port: 0, tlsHosts: ['localhost', '127.0.0.1'], ...opts.gateway });
  const started = await gateway.start();
  const endpoint = `localhost:${started.port}`;
  let cached: { token: string; at: number } | null = null;
  const token = async () => {
    // Access tokens live 15 minutes of the fake clock, which tests move.
    const now = s.clock.now().getTime();
    if (!cached || now - cached.at > 5 * 60_000) cached = { token: (await login(s, OWNER.email, OWNER.password)).access_token, at: now };
    return cached.token;
  };
  const agents: AgentSimulator[] = [];
  const nodeWithToken = async () => {
    const t = await token();
    const tag = Math.random().toString(36).slice(2, 8);
    const node = (await s.api.post('/api/v1/nodes', { name: `n-${tag}`, address: `${tag}.example.com` }, { token: t })).body;
    const issued = await s.api.post(`/api/v1/nodes/${node.id}/enroll-token`, undefined, { token: t });
    if (issued.status !== 201) throw new Error(issued.text);
    return { node, enrollToken: issued.body.token as string };
  };
  return {
    s,
    gateway,
    endpoint,
    caCertPem: started.caCertPem,
    token,
    nodeWithToken,
    async enrolledAgent() {
      const { node, enrollToken } = await nodeWithToken();
      const agent = await AgentSimulator.enroll({ endpoint, caCertPem: started.caCertPem, token: enrollToken });
      agents.push(agent);
      return { node: node as { id: string; name: string }, agent };
    },
    async stop() {
      for (const a of agents) await a.disconnect().catch(() => {});
      await gateway.stop();
      await s.stop();
    },
  };
}

/** Reads a node row straight from the database. */
export const nodeRow = (g: Gateway, id: string) =>
  g.s.deps.db.selectFrom('nodes').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

/** Polls until `check` passes (for effects written by the gateway after a message). */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 5000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AppProcess,
  type ControlPlane,
  createFleetForProtocols,
  decodeSubscriptionBody,
  type Fleet,
  fetchSubscription,
  fleetOverRest,
  httpGetThroughProxy,
  parseShareLink,
  spawnApp,
  startControlPlane,
  subscriptionUsage,
} from '@svc/testkit';
import { freePort } from '@svc/testkit/engine-process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentEnv,
  type CountingServer,
  clientFor,
  enginePid,
  enrollAgent,
  eventually,
  skipReason,
  startCountingServer,
} from '../e2e/loop.ts';
import { type BuiltAgent, buildPreviousAgent, PREVIOUS_AGENT_RELEASE } from './previous-release.ts';

/**
 * A node whose agent was not upgraded keeps working (issue 18.5; docs/agent.md, "Versions"):
 * svc-agent of the previous minor, built from its own source at the commit it was released
 * from, enrolls with today's control plane (`svc start`, real gRPC over TLS), applies what it
 * is sent to Debian's v2ray, serves a client built from /sub, has its usage credited exactly
 * once, and applies a change made afterwards (a new subscription, added to the running engine).
 */
if (skipReason) console.warn(`previous-agent compatibility test skipped: ${skipReason}`);

let built: BuiltAgent;
let cp: ControlPlane;
let fleet: Fleet;
let dest: CountingServer;
let stateDir: string;
let agent: AppProcess | undefined;

const node = async () => (await cp.api.get(`/api/v1/nodes/${fleet.node.id}`)).body;
const applied = (n: Record<string, any>) =>
  n.connectivity === 'online' && n.applied_revision > 0 && n.applied_revision >= n.desired_revision;

beforeAll(async () => {
  if (skipReason) return;
  built = buildPreviousAgent();
  dest = await startCountingServer();
  cp = await startControlPlane();
  fleet = await createFleetForProtocols(cp.api, { node: { address: '127.0.0.1' }, ports: { 'vmess-tcp': await freePort() } });
  stateDir = await mkdtemp(join(tmpdir(), 'svc-agent-previous-'));
  await enrollAgent(built.main, stateDir, fleet.enroll, { joined: true });
  agent = spawnApp(built.main, agentEnv(stateDir), ['run']);
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  const pid = stateDir ? await enginePid(stateDir) : null;
  if (pid) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
  await cp?.stop();
  await dest?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
  built?.remove();
});

describe.skipIf(skipReason)(`svc-agent ${PREVIOUS_AGENT_RELEASE.version} (the previous minor) against today's control plane`, () => {
  it('enrolls, opens its stream, reports its version and applies the desired state', async () => {
    const n = await eventually(async () => {
      const v = await node();
      return applied(v) ? v : undefined;
    }, `the node applied by svc-agent ${PREVIOUS_AGENT_RELEASE.version}`);
    expect(n).toMatchObject({ agent_version: PREVIOUS_AGENT_RELEASE.version, last_apply_error: null, enrolled: true });
    expect(n.applied_revision).toBe(n.desired_revision);
  });

  it('serves the link /sub hands out, and the bytes are credited exactly once', async () => {
    const [link] = decodeSubscriptionBody((await fetchSubscription(fleet.subscriptionUrl)).body).map(parseShareLink);
    const client = await clientFor(link as NonNullable<typeof link>);
    try {
      for (let i = 0; i < 2; i++) expect((await httpGetThroughProxy(client.port, `${dest.url}/bytes/200000`)).status).toBe(200);
    } finally {
      await client.stop();
    }
    const sent = () => dest.totals().uplink + dest.totals().downlink;
    await eventually(async () => (sent() >= 400_000 ? true : undefined), 'the destination saw the bytes');
    const usage = await eventually(async () => {
      const u = await subscriptionUsage(cp.api, fleet.subscription.id);
      return u.used_bytes >= sent() ? u : undefined;
    }, 'the usage credited');
    expect(usage.used_bytes).toBe(sent());
  });

  it('applies a change made afterwards: a new subscription is added to the running engine and served', async () => {
    const before = await node();
    const pid = await enginePid(stateDir);
    const client = await fleetOverRest.createClient(cp.api);
    const sub = await fleetOverRest.createSubscription(cp.api, { clientId: client.id, accessGroupIds: [fleet.accessGroupId] });
    const after = await eventually(async () => {
      const v = await node();
      return v.desired_revision > before.desired_revision && applied(v) ? v : undefined;
    }, 'the new revision applied');
    expect(after.last_apply_error).toBeNull();
    expect(await enginePid(stateDir)).toBe(pid);
    const [link] = decodeSubscriptionBody((await fetchSubscription(sub.link)).body).map(parseShareLink);
    const proxy = await clientFor(link as NonNullable<typeof link>);
    try {
      expect((await httpGetThroughProxy(proxy.port, `${dest.url}/bytes/1000`)).status).toBe(200);
    } finally {
      await proxy.stop();
    }
  });
});

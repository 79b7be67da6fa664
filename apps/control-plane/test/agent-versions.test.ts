import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AGENT_RELEASE } from '@svc/domain';
import { AgentSimulator } from '@svc/testkit/agent-simulator';
import { ClientError, Status } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Gateway, nodeRow, startGateway } from './harness.ts';

/**
 * Agent versions over real gRPC and TLS (docs/agent.md, "Versions"; spec 4.1, 7.1, 9.3, 9.4):
 * every agent that speaks svc.controlplane.v1 is served whatever version it names; an invalid
 * token is UNAUTHENTICATED whatever the version; outdated agents are flagged on the node view
 * and raise node.agent_outdated; an operator's floor (grpc.min_agent_version) is opt-in and
 * refuses with FAILED_PRECONDITION only after the token or certificate was checked.
 */

const [major, minor] = AGENT_RELEASE.split('.').map(Number) as [number, number];
const PREVIOUS = `${major}.${minor - 1}.3`;
const OTHER_AGENT = '0.0.0-acceptance';

const outcome = (p: Promise<unknown>) =>
  p.then(
    () => ({ code: 'OK', details: '' }),
    (err: unknown) => (err instanceof ClientError ? { code: Status[err.code], details: err.details } : { code: String(err), details: '' }),
  );

function versions(g: () => Gateway) {
  const agents: AgentSimulator[] = [];
  afterAll(async () => {
    for (const a of agents) await a.disconnect().catch(() => {});
  });
  const enroll = async (token: string, agentVersion: string) => {
    const gw = g();
    const agent = await AgentSimulator.enroll({ endpoint: gw.endpoint, caCertPem: gw.caCertPem, token, agentVersion });
    agents.push(agent);
    return agent;
  };
  /** The node's identity, with the agent on it reporting `agentVersion` in Hello. */
  const reporting = (enrolled: AgentSimulator, agentVersion: string) => {
    const gw = g();
    const agent = new AgentSimulator(
      { endpoint: gw.endpoint, caCertPem: gw.caCertPem, agentVersion },
      enrolled.nodeId,
      enrolled.certPem,
      enrolled.keyPem,
    );
    agents.push(agent);
    return agent;
  };
  return { enroll, reporting };
}

describe('by default, the version an agent names refuses nothing', () => {
  let g: Gateway;
  beforeAll(async () => {
    g = await startGateway();
  });
  afterAll(() => g.stop());
  const { enroll, reporting } = versions(() => g);

  it("the release the gateway ships with is the agent's own package version", () => {
    const pkg = JSON.parse(readFileSync(new URL('../../agent/package.json', import.meta.url), 'utf8')) as { version: string };
    expect(pkg.version).toBe(AGENT_RELEASE);
    expect(minor, 'the previous-minor window needs a minor above 0 for this test').toBeGreaterThanOrEqual(1);
  });

  it('an agent naming itself 0.0.0-acceptance enrolls, syncs and is sent its desired state', async () => {
    const { node, enrollToken } = await g.nodeWithToken();
    const agent = await enroll(enrollToken, OTHER_AGENT);
    expect(agent.nodeId).toBe(node.id);
    agent.connect();
    const desired = BigInt((await nodeRow(g, node.id)).desired_revision);
    await agent.waitForRevision(desired);
    await eventually(async () => {
      const row = await nodeRow(g, node.id);
      expect(row).toMatchObject({ connectivity: 'online', agent_version: OTHER_AGENT });
      expect(BigInt(row.applied_revision)).toBe(desired);
    });
    await agent.disconnect();
  });

  it('an invalid token is UNAUTHENTICATED whatever version the agent names', async () => {
    for (const v of [OTHER_AGENT, '0.0.1', AGENT_RELEASE, 'py-1.0']) {
      const refused = await outcome(enroll(randomBytes(32).toString('base64url'), v));
      expect(refused.code, v).toBe('UNAUTHENTICATED');
    }
  });

  it('older agents are flagged on the node view (outdated_agent) and raise node.agent_outdated once; current and newer are not', async () => {
    const { node, enrollToken } = await g.nodeWithToken();
    const first = await enroll(enrollToken, AGENT_RELEASE);
    for (const version of [PREVIOUS, OTHER_AGENT, AGENT_RELEASE, `${major}.${minor + 1}.0`, OTHER_AGENT]) {
      const agent = reporting(first, version);
      agent.connect();
      await eventually(async () => expect(await nodeRow(g, node.id)).toMatchObject({ connectivity: 'online', agent_version: version }));
      const view = (await g.s.api.get(`/api/v1/nodes/${node.id}`, { token: await g.token() })).body;
      expect(view).toMatchObject({ agent_version: version, outdated_agent: version === PREVIOUS || version === OTHER_AGENT });
      await agent.disconnect();
      await eventually(async () => expect((await nodeRow(g, node.id)).connectivity).toBe('offline'));
    }
    const events = await g.s.deps.db
      .selectFrom('events')
      .select(['payload'])
      .where('type', '=', 'node.agent_outdated')
      .orderBy('id')
      .execute();
    const mine = events
      .map((e) => (typeof e.payload === 'string' ? JSON.parse(e.payload) : e.payload) as { node_id: string; agent_version: string })
      .filter((p) => p.node_id === node.id)
      .map((p) => p.agent_version);
    expect(mine).toEqual([PREVIOUS, OTHER_AGENT, OTHER_AGENT]);
  });
});

describe('grpc.min_agent_version set: refused with FAILED_PRECONDITION after authentication, nothing written', () => {
  let g: Gateway;
  const FLOOR = `${major}.${minor}.0`;
  beforeAll(async () => {
    g = await startGateway({ server: { env: { SVC_GRPC_MIN_AGENT_VERSION: FLOOR } } });
  });
  afterAll(() => g.stop());
  const { enroll, reporting } = versions(() => g);

  it('Enroll: a bogus token below the floor is UNAUTHENTICATED; a valid one is FAILED_PRECONDITION and stays usable', async () => {
    expect((await outcome(enroll(randomBytes(32).toString('base64url'), PREVIOUS))).code).toBe('UNAUTHENTICATED');
    const { node, enrollToken } = await g.nodeWithToken();
    const refused = await outcome(enroll(enrollToken, PREVIOUS));
    expect(refused).toEqual({
      code: 'FAILED_PRECONDITION',
      details: `agent version ${PREVIOUS} is below this control plane's minimum ${FLOOR} (grpc.min_agent_version): upgrade the agent on this node`,
    });
    expect(await nodeRow(g, node.id)).toMatchObject({ agent_version: null, cert_serial: null });
    expect((await enroll(enrollToken, AGENT_RELEASE)).nodeId).toBe(node.id);
  });

  it('Sync: the node below the floor is ended with FAILED_PRECONDITION and stays offline with its last version', async () => {
    const { node, enrollToken } = await g.nodeWithToken();
    const enrolled = await enroll(enrollToken, AGENT_RELEASE);
    const old = reporting(enrolled, PREVIOUS);
    old.connect();
    expect(await old.waitForEnd()).toMatchObject({ code: Status.FAILED_PRECONDITION });
    expect(await nodeRow(g, node.id)).toMatchObject({ connectivity: 'offline', agent_version: AGENT_RELEASE });
  });
});

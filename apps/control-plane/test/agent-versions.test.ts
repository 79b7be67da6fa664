import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { AGENT_RELEASE } from '@svc/domain';
import { AgentSimulator } from '@svc/testkit/agent-simulator';
import { ClientError, Status } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Gateway, nodeRow, startGateway } from './harness.ts';

/**
 * The agent versions a gateway serves (docs/agent.md, "Versions"): its own release's minor and
 * the one before; an older svc-agent is refused at Enroll and Sync with FAILED_PRECONDITION
 * and a message saying to upgrade, and nothing is written. Over real gRPC and TLS.
 */

let g: Gateway;
const agents: AgentSimulator[] = [];
beforeAll(async () => {
  g = await startGateway();
});
afterAll(async () => {
  for (const a of agents) await a.disconnect().catch(() => {});
  await g.stop();
});

const [major, minor] = AGENT_RELEASE.split('.').map(Number) as [number, number];
const PREVIOUS = `${major}.${minor - 1}.3`;
const TOO_OLD = `${major}.${minor - 2}.9`;

const enroll = async (token: string, agentVersion: string) => {
  const agent = await AgentSimulator.enroll({ endpoint: g.endpoint, caCertPem: g.caCertPem, token, agentVersion });
  agents.push(agent);
  return agent;
};

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => ({ code: 'OK', details: '' }),
    (err: unknown) => (err instanceof ClientError ? { code: Status[err.code], details: err.details } : { code: String(err), details: '' }),
  );

describe('agent versions: the current and the previous minor are served, older agents are told to upgrade', () => {
  it("the release the gateway serves is the agent's own package version", () => {
    const pkg = JSON.parse(readFileSync(new URL('../../agent/package.json', import.meta.url), 'utf8')) as { version: string };
    expect(pkg.version).toBe(AGENT_RELEASE);
    expect(minor, 'the previous-minor window needs a minor above 1 for this test').toBeGreaterThanOrEqual(2);
  });

  it('Enroll refuses a too-old agent with FAILED_PRECONDITION and leaves the token usable for the upgraded one', async () => {
    const { node, enrollToken } = await g.nodeWithToken();
    const refused = await refusal(enroll(enrollToken, TOO_OLD));
    expect(refused.code).toBe('FAILED_PRECONDITION');
    expect(refused.details).toBe(
      `svc-agent ${TOO_OLD} is too old for this control plane (agents ${major}.${minor}.x and ${major}.${minor - 1}.x are served): upgrade the agent on this node`,
    );
    expect(await nodeRow(g, node.id)).toMatchObject({ agent_version: null, cert_serial: null });
    const agent = await enroll(enrollToken, PREVIOUS);
    expect(agent.nodeId).toBe(node.id);
    expect((await nodeRow(g, node.id)).agent_version).toBe(PREVIOUS);
  });

  it('Sync refuses a Hello from a too-old agent and writes nothing; the previous and current minors are admitted', async () => {
    const { node, enrollToken } = await g.nodeWithToken();
    const old = await enroll(enrollToken, PREVIOUS);
    // The node's identity, with the agent on it reporting another version.
    const reporting = (agentVersion: string) => {
      const agent = new AgentSimulator({ endpoint: g.endpoint, caCertPem: g.caCertPem, agentVersion }, old.nodeId, old.certPem, old.keyPem);
      agents.push(agent);
      return agent;
    };
    const tooOld = reporting(TOO_OLD);
    tooOld.connect();
    expect(await tooOld.waitForEnd()).toMatchObject({ code: Status.FAILED_PRECONDITION });
    expect(await nodeRow(g, node.id)).toMatchObject({ connectivity: 'offline', agent_version: PREVIOUS });

    for (const version of [PREVIOUS, AGENT_RELEASE, `${major}.${minor + 1}.0`]) {
      const agent = reporting(version);
      agent.connect();
      await eventually(async () => expect(await nodeRow(g, node.id)).toMatchObject({ connectivity: 'online', agent_version: version }));
      // The panel flags the previous minor (spec 9.4): served, to be upgraded before the next release.
      const view = (await g.s.api.get(`/api/v1/nodes/${node.id}`, { token: await g.token() })).body;
      expect(view).toMatchObject({ agent_version: version, outdated_agent: version === PREVIOUS });
      await agent.disconnect();
      await eventually(async () => expect((await nodeRow(g, node.id)).connectivity).toBe('offline'));
    }
  });
});

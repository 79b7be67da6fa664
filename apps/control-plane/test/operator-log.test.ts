import { AgentSimulator } from '@svc/testkit/agent-simulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway as startGatewayFromConfig } from '../src/start.ts';
import { type Gateway, startGateway } from './harness.ts';

/**
 * What an operator reads in the gateway's log (docs/observability.md, "Logs"), over real gRPC
 * with TLS: an enrollment, each stream that opens and each that ends, with the node's id and
 * name, the agent's address and versions, and never a token, key or certificate.
 */
let g: Gateway;
beforeAll(async () => {
  g = await startGateway({ server: { env: { SVC_GRPC_HOST: '0.0.0.0', SVC_GRPC_PORT: '0' } } });
});
afterAll(async () => {
  await g?.stop();
});

const lines = (msg: RegExp) => g.s.logs.filter((l) => msg.test(String(l.msg)));

async function logged(msg: RegExp, nodeId: string, timeoutMs = 5000): Promise<Record<string, any>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const line = lines(msg).find((l) => l.node_id === nodeId);
    if (line) return line;
    if (Date.now() > until) throw new Error(`no ${msg} line for ${nodeId}: ${JSON.stringify(g.s.logs.slice(-10))}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('agents in the gateway log', () => {
  it('an enrollment logs "agent enrolled" at info: node id and name, address, hostname, agent version; no token, key or certificate', async () => {
    const { node, enrollToken } = await g.nodeWithToken();
    const agent = await AgentSimulator.enroll({
      endpoint: g.endpoint,
      caCertPem: g.caCertPem,
      token: enrollToken,
      hostname: 'edge-host-1',
      agentVersion: '0.0.0-acceptance',
    });
    const line = await logged(/^agent enrolled/, node.id);
    const name = (await g.s.api.get(`/api/v1/nodes/${node.id}`, { token: await g.token() })).body.name;
    expect(line).toMatchObject({
      level: 30,
      node_id: node.id,
      node_name: name,
      address: '127.0.0.1',
      hostname: 'edge-host-1',
      agent_version: '0.0.0-acceptance',
    });
    expect(line.msg).toBe(`agent enrolled: node ${name} (${node.id}) from 127.0.0.1, agent version 0.0.0-acceptance`);
    const text = JSON.stringify(line);
    expect(text).not.toContain(enrollToken);
    expect(text).not.toContain('CERTIFICATE');
    expect(text).not.toContain(agent.keyPem.slice(40, 80));
  });

  it('a Sync stream logs "agent connected" (address, agent and engine version) and, when the agent closes it, "agent disconnected" saying so', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect();
    const connected = await logged(/^agent connected/, node.id);
    expect(connected).toMatchObject({
      level: 30,
      node_id: node.id,
      node_name: node.name,
      address: '127.0.0.1',
      hostname: 'sim-node',
      agent_version: 'sim-1.0.0',
      xray_version: '25.10.15',
      session: expect.stringMatching(/^stm_/),
    });
    expect(connected.msg).toBe(`agent connected: node ${node.name} (${node.id}) from 127.0.0.1, agent version sim-1.0.0, engine 25.10.15`);
    await agent.disconnect();
    const gone = await logged(/^agent disconnected/, node.id);
    expect(gone).toMatchObject({
      level: 30,
      node_id: node.id,
      node_name: node.name,
      address: '127.0.0.1',
      session: connected.session,
      reason: 'the agent closed the stream',
      connected_for_s: expect.any(Number),
    });
    expect(gone.msg).toBe(`agent disconnected: node ${node.name} (${node.id}): the agent closed the stream`);
    for (const l of [connected, gone]) {
      expect(JSON.stringify(l)).not.toContain('CERTIFICATE');
      expect(JSON.stringify(l)).not.toContain(agent.keyPem.slice(40, 80));
    }
  });

  it('a stream the gateway ends (the node disabled) logs "agent disconnected" with the status the agent was given', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect();
    await logged(/^agent connected/, node.id);
    const disabled = await g.s.api.patch(`/api/v1/nodes/${node.id}`, { admin_status: 'disabled' }, { token: await g.token() });
    expect(disabled.status, disabled.text).toBe(200);
    const end = await agent.waitForEnd();
    const gone = await logged(/^agent disconnected/, node.id);
    expect(gone.reason).toBe(end.details);
    expect(gone.msg).toBe(`agent disconnected: node ${node.name} (${node.id}): ${end.details}`);
  });

  it('the gateway logs the address its port is bound to and where agents dial', async () => {
    const gateway = await startGatewayFromConfig(g.s.runtime);
    try {
      const line = g.s.logs.find((l) => l.replica === gateway.replicaId && /^agent gateway listening/.test(String(l.msg)));
      expect(line).toMatchObject({ addresses: [`0.0.0.0:${gateway.port}`], grpc_endpoint: expect.any(String) });
      expect(line?.msg).toBe(
        `agent gateway listening on 0.0.0.0:${gateway.port} (every IPv4 address of this machine); agents dial ${line?.grpc_endpoint}`,
      );
    } finally {
      await gateway.stop();
    }
  });
});

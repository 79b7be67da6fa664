import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { JOBS, verifyWebhookSignature } from '@svc/domain';
import type { AgentSimulator } from '@svc/testkit/agent-simulator';
import { createWorker, type WorkerService } from '@svc/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Gateway, nodeRow, startGateway } from './harness.ts';

/**
 * Issue 28.2, a failed apply is loud, through the real gateway (an agent over mTLS sends
 * ApplyResult with success false): the control plane logs it (warn, the node's id and name,
 * the revision, the agent's words), raises node.apply_failed once per failed revision (to
 * webhooks, signed, through the worker), and the node view shows which revision fails and
 * since when. A later revision that applies clears it, logged and raised as node.apply_recovered.
 */

const V2RAY_WORDS = [
  'V2Ray 4.34.0 (user) 20230518-074445 (go1.19.8 linux/amd64)',
  'main: failed to read config files: [config.next.json] > v2ray.com/core/infra/conf: Config: unknown transport protocol: grpc',
].join('\n');

let g: Gateway;
let worker: WorkerService;
let receiver: Server;
let hook: { id: string; secret: string };
const received: Array<{ signature: string; body: string }> = [];

beforeAll(async () => {
  g = await startGateway();
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      received.push({ signature: String(req.headers['x-svc-signature']), body });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/svc`;
  const created = await g.s.api.post(
    '/api/v1/webhooks',
    { url, event_types: ['node.apply_failed', 'node.apply_recovered'] },
    { token: await g.token() },
  );
  expect(created.status, created.text).toBe(201);
  hook = { id: created.body.id, secret: created.body.secret };
  worker = createWorker(g.s.runtime, {
    eventsEveryMs: 50,
    webhooksEveryMs: 50,
    only: [JOBS.eventsDispatch, JOBS.webhooksDeliver, JOBS.webhooksSweep],
  });
  await worker.start();
}, 60_000);
afterAll(async () => {
  await worker?.stop();
  await g?.stop();
  await new Promise((r) => receiver?.close(r));
});

let port = 41_000;
/** A change to the node (an inbound added): a new desired revision. */
async function changeNode(nodeId: string): Promise<number> {
  const t = await g.token();
  const profile = await g.s.api.post(
    '/api/v1/inbound-profiles',
    { name: `p-${port}`, protocol: 'vmess', stream: { network: 'tcp', security: 'none' } },
    { token: t },
  );
  expect(profile.status, profile.text).toBe(201);
  const res = await g.s.api.post('/api/v1/inbounds', { node_id: nodeId, profile_id: profile.body.id, port: port++ }, { token: t });
  expect(res.status, res.text).toBe(201);
  return Number((await nodeRow(g, nodeId)).desired_revision);
}

const view = async (nodeId: string) => (await g.s.api.get(`/api/v1/nodes/${nodeId}`, { token: await g.token() })).body;
const logsOf = (msg: string, nodeId: string) => g.s.logs.filter((l) => l.msg === msg && l.node_id === nodeId);
const deliveredOf = (type: string, nodeId: string) =>
  received
    .map((r) => ({ ...r, envelope: JSON.parse(r.body) }))
    .filter((r) => r.envelope.type === type && r.envelope.data.node_id === nodeId);

describe('a failed apply is loud (through the gateway, an agent over mTLS)', () => {
  let node: { id: string; name: string };
  let agent: AgentSimulator;
  let failed: number;

  it('the failure is logged at warn with the node, the revision and the agent’s words; the node view shows the failed revision and since when', async () => {
    ({ node, agent } = await g.enrolledAgent());
    agent.connect();
    await agent.waitForRevision(1n);
    await eventually(async () => expect((await nodeRow(g, node.id)).applied_revision).toBe(1));
    agent.failApplyWith = V2RAY_WORDS;
    const at = g.s.clock.now().toISOString();
    failed = await changeNode(node.id);
    await agent.waitForRevision(BigInt(failed));

    const shown = await eventually(async () => {
      const v = await view(node.id);
      expect(v.apply_failed_revision).toBe(failed);
      return v;
    });
    expect(shown).toMatchObject({
      applied_revision: 1,
      desired_revision: failed,
      apply_failing_since: at,
      last_apply_error: `revision ${failed}: ${V2RAY_WORDS}`,
      connectivity: 'online',
    });
    expect(logsOf('node failed to apply its desired state', node.id)).toEqual([
      expect.objectContaining({
        level: 40,
        node_id: node.id,
        node_name: node.name,
        revision: failed,
        applied_revision: 1,
        repeat: false,
        error: V2RAY_WORDS,
      }),
    ]);
  });

  it('node.apply_failed reaches the webhook once, signed, with the node, the revision and the error', async () => {
    await eventually(async () => expect(deliveredOf('node.apply_failed', node.id)).toHaveLength(1), 10_000);
    const [delivery] = deliveredOf('node.apply_failed', node.id);
    expect(delivery?.envelope.data).toEqual({
      node_id: node.id,
      name: node.name,
      revision: failed,
      applied_revision: 1,
      error: V2RAY_WORDS,
      failing_since: expect.any(String),
    });
    expect(verifyWebhookSignature(hook.secret, delivery?.body as string, delivery?.signature, { now: g.s.clock.now() })).toBe(true);
  });

  it('the same failure again after a reconnect is logged as a repeat, not raised again', async () => {
    await agent.disconnect();
    agent.connect();
    await eventually(async () => expect(logsOf('node failed to apply its desired state', node.id)).toHaveLength(2));
    expect(logsOf('node failed to apply its desired state', node.id)[1]).toMatchObject({ revision: failed, repeat: true });
    const events = await g.s.deps.db.selectFrom('events').select('payload').where('type', '=', 'node.apply_failed').execute();
    expect(events.filter((e) => JSON.stringify(e.payload).includes(node.id))).toHaveLength(1);
  });

  it('a later revision that applies clears the failure: logged, node.apply_recovered delivered, the view clean', async () => {
    agent.failApplyWith = null;
    const fixed = await changeNode(node.id);
    await agent.waitForRevision(BigInt(fixed));
    await eventually(async () =>
      expect(await view(node.id)).toMatchObject({
        applied_revision: fixed,
        apply_failed_revision: null,
        apply_failing_since: null,
        last_apply_error: null,
      }),
    );
    expect(logsOf('node applied its desired state again', node.id)).toEqual([
      expect.objectContaining({ level: 30, node_name: node.name, revision: fixed, failed_revision: failed }),
    ]);
    await eventually(async () => expect(deliveredOf('node.apply_recovered', node.id)).toHaveLength(1), 10_000);
    expect(deliveredOf('node.apply_recovered', node.id)[0]?.envelope.data).toMatchObject({ revision: fixed, failed_revision: failed });
  });
});

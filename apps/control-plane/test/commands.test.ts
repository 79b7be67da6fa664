import { LogSource } from '@svc/proto';
import { adminWithRole, openEventStream } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Gateway, nodeRow, startGateway } from './harness.ts';

let g: Gateway;
beforeAll(async () => {
  g = await startGateway({ server: { env: { SVC_AGENT_COMMAND_TIMEOUT_SECONDS: '1' } } });
});
afterAll(() => g.stop());

async function onlineAgent() {
  const { node, agent } = await g.enrolledAgent();
  agent.connect();
  await eventually(async () => expect((await nodeRow(g, node.id)).connectivity).toBe('online'));
  return { node, agent };
}

describe('POST /nodes/{id}/restart-xray (spec 4.4)', () => {
  it('202 with a command_id; the agent receives restart_xray with that id; audited', async () => {
    const { node, agent } = await onlineAgent();
    const res = await g.s.api.post(`/api/v1/nodes/${node.id}/restart-xray`, undefined, { token: await g.token() });
    expect(res.status, res.text).toBe(202);
    expect(res.body.command_id).toMatch(/^cmd_/);
    await agent.waitFor(() => agent.restarts === 1);
    expect(agent.commands.map((c) => [c.commandId, !!c.restartXray])).toEqual([[res.body.command_id, true]]);
    const audit = await g.s.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'node.xray_restart_requested')
      .where('entity_id', '=', node.id)
      .execute();
    expect(audit).toHaveLength(1);
  });

  it('409 node-offline when no stream is open; 404 for an unknown node; 403 for a viewer restarting; a viewer reads logs (issue 14.7: viewers read what admins read but secrets)', async () => {
    const { node } = await g.enrolledAgent();
    const off = await g.s.api.post(`/api/v1/nodes/${node.id}/restart-xray`, undefined, { token: await g.token() });
    expect(off.status).toBe(409);
    expect(off.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(off.body).toMatchObject({ type: 'urn:svc:problem:conflict', code: 'node-offline' });
    expect((await g.s.api.post('/api/v1/nodes/nod_missing/restart-xray', undefined, { token: await g.token() })).status).toBe(404);
    const viewer = (await adminWithRole(g.s, await g.token(), 'viewer')).access_token;
    const { node: on, agent } = await onlineAgent();
    expect((await g.s.api.post(`/api/v1/nodes/${on.id}/restart-xray`, undefined, { token: viewer })).status).toBe(403);
    expect(agent.commands).toEqual([]);
    const logs = await g.s.api.get(`/api/v1/nodes/${on.id}/logs?source=agent&limit=5`, { token: viewer });
    expect(logs.status, logs.text).toBe(200);
    expect(agent.commands.filter((c) => c.getLogs)).toHaveLength(1);
    expect(agent.commands.some((c) => c.restartXray)).toBe(false);
  });

  it('a node marked online whose stream no replica holds (a crashed replica) is 409 after the hand-off timeout', async () => {
    const { node } = await g.enrolledAgent();
    await g.s.deps.db.updateTable('nodes').set({ connectivity: 'online' }).where('id', '=', node.id).execute();
    const res = await g.s.api.post(`/api/v1/nodes/${node.id}/restart-xray`, undefined, { token: await g.token() });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('node-offline');
  });
});

describe('GET /nodes/{id}/logs (spec 4.4, 8: the last N lines)', () => {
  it('sends get_logs with source and limit and returns the lines the agent sends back, across batches until eof', async () => {
    const { node, agent } = await onlineAgent();
    for (let i = 1; i <= 130; i++) agent.logLines.push({ source: LogSource.XRAY, line: `xray line ${i}` });
    agent.logLines.push({ source: LogSource.AGENT, line: 'agent line' });
    const res = await g.s.api.get(`/api/v1/nodes/${node.id}/logs?source=xray&limit=120`, { token: await g.token() });
    expect(res.status, res.text).toBe(200);
    expect(res.body.lines).toHaveLength(120);
    expect(res.body.lines[0]).toMatchObject({ source: 'xray', line: 'xray line 11' });
    expect(res.body.lines.at(-1).line).toBe('xray line 130');
    const cmd = agent.commands.find((c) => c.getLogs);
    expect(cmd?.getLogs).toEqual({ source: LogSource.XRAY, limit: 120 });
    const agentLog = await g.s.api.get(`/api/v1/nodes/${node.id}/logs?source=agent`, { token: await g.token() });
    expect(agentLog.body.lines.map((l: { line: string }) => l.line)).toEqual(['agent line']);
  });

  it('an agent that does not answer is a 504 problem', async () => {
    const { node, agent } = await onlineAgent();
    agent.ignoreCommands = true;
    const res = await g.s.api.get(`/api/v1/nodes/${node.id}/logs`, { token: await g.token() });
    expect(res.status).toBe(504);
    expect(res.body.type).toBe('urn:svc:problem:timeout');
  });

  it('bad source or limit is 400 per field; an offline node is 409', async () => {
    const { node } = await g.enrolledAgent();
    const bad = await g.s.api.get(`/api/v1/nodes/${node.id}/logs?source=kernel&limit=0`, { token: await g.token() });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['query.limit', 'query.source']);
    expect((await g.s.api.get(`/api/v1/nodes/${node.id}/logs`, { token: await g.token() })).status).toBe(409);
  });
});

describe('GET /nodes/{id}/logs/stream (spec 6 "Log stream"): SSE live tail', () => {
  it('streams LogBatch lines as log events; start_log_stream once for two listeners, stop_log_stream when the last leaves', async () => {
    const { node, agent } = await onlineAgent();
    const url = `${g.s.url}/api/v1/nodes/${node.id}/logs/stream?source=agent`;
    const token = await g.token();
    const a = await openEventStream(url, { token });
    expect(a.status).toBe(200);
    expect(a.headers.get('content-type')).toMatch(/text\/event-stream/);
    await a.waitFor((ev) => ev.filter((e) => e.event === 'log').length >= 2);
    const first = JSON.parse(a.events.find((e) => e.event === 'log')?.data ?? '[]');
    expect(first[0]).toMatchObject({ source: 'agent', line: expect.stringMatching(/^agent live line \d+$/) });

    const b = await openEventStream(url, { token });
    await b.waitFor((ev) => ev.some((e) => e.event === 'log'));
    expect(agent.commands.filter((c) => c.startLogStream)).toHaveLength(1);
    const tailId = agent.commands.find((c) => c.startLogStream)?.commandId;

    await a.close();
    await new Promise((r) => setTimeout(r, 200));
    expect(agent.commands.filter((c) => c.stopLogStream)).toHaveLength(0);
    expect(agent.activeTails).toEqual([tailId]);

    await b.close();
    await agent.waitFor(() => agent.commands.some((c) => c.stopLogStream));
    expect(agent.commands.find((c) => c.stopLogStream)?.commandId).toBe(tailId);
    expect(agent.activeTails).toEqual([]);
  });

  it('the tail resumes when the node reconnects', async () => {
    const { node, agent } = await onlineAgent();
    const s = await openEventStream(`${g.s.url}/api/v1/nodes/${node.id}/logs/stream`, { token: await g.token() });
    await s.waitFor((ev) => ev.some((e) => e.event === 'log'));
    await agent.disconnect();
    agent.connect();
    const seen = s.events.length;
    await s.waitFor((ev) => ev.length > seen + 1 && ev.at(-1)?.event === 'log');
    await s.close();
  });

  it('an offline node is a 409 problem before any event; an unknown node is 404', async () => {
    const { node } = await g.enrolledAgent();
    const res = await openEventStream(`${g.s.url}/api/v1/nodes/${node.id}/logs/stream`, { token: await g.token() });
    expect(res.status).toBe(409);
    expect(JSON.parse(res.text).code).toBe('node-offline');
    expect((await openEventStream(`${g.s.url}/api/v1/nodes/nod_missing/logs/stream`, { token: await g.token() })).status).toBe(404);
  });
});

import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AGENT_RELEASE } from '@svc/domain';
import { adminWithRole } from '@svc/testkit';
import { AgentSimulator } from '@svc/testkit/agent-simulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Gateway, startGateway } from './harness.ts';

/**
 * POST /api/v1/nodes/{id}/upgrade-agent (issue 31 item 4; our extension): the node's agent gets
 * Command.upgrade_agent with the release this control plane serves (version, absolute URL under
 * the public base URL, SHA-256); the node view shows the upgrade pending until the agent's
 * UpgradeResult, which ends it once (succeeded, or failed with the agent's words and
 * node.agent_upgrade_failed). Refusals change nothing.
 */
const BODY = '#!/usr/bin/env node\nconsole.log("next")\n';
const SUM = createHash('sha256').update(BODY).digest('hex');
const NEXT = AGENT_RELEASE;
let dist: string;
let g: Gateway;

beforeAll(async () => {
  dist = mkdtempSync(join(tmpdir(), 'svc-upgrade-dist-'));
  writeFileSync(join(dist, `svc-agent-${NEXT}.mjs`), BODY);
  writeFileSync(join(dist, `svc-agent-${NEXT}.mjs.sha256`), `${SUM}  svc-agent-${NEXT}.mjs\n`);
  g = await startGateway({ server: { env: { SVC_AGENT_DIST_DIR: dist, SVC_PUBLIC_BASE_URL: 'https://cp.example.com/base' } } });
});
afterAll(async () => {
  await g?.stop();
  rmSync(dist, { recursive: true, force: true });
});

/** An agent of `version` enrolled for a new node, its stream open. */
async function agentOf(version: string) {
  const { node, enrollToken } = await g.nodeWithToken();
  const agent = await AgentSimulator.enroll({ endpoint: g.endpoint, caCertPem: g.caCertPem, token: enrollToken, agentVersion: version });
  agent.connect();
  await eventually(async () => expect((await view(node.id)).connectivity).toBe('online'));
  return { node, agent };
}

const view = async (id: string) => (await g.s.api.get(`/api/v1/nodes/${id}`, { token: await g.token() })).body;
const ask = async (id: string, token?: string) =>
  g.s.api.post(`/api/v1/nodes/${id}/upgrade-agent`, undefined, { token: token ?? (await g.token()) });

describe('POST /nodes/{id}/upgrade-agent', () => {
  it('an older agent is offered the release; the command carries version, URL and SHA-256; pending, then succeeded on its result', async () => {
    const { node, agent } = await agentOf('0.1.0');
    const before = await view(node.id);
    expect(before.agent_upgrade_available).toBe(AGENT_RELEASE);
    expect(before.agent_upgrade).toBeNull();

    const res = await ask(node.id);
    expect(res.status, res.text).toBe(202);
    expect(res.body).toEqual({ command_id: expect.stringMatching(/^cmd_/), version: NEXT });
    await agent.waitFor(() => agent.commands.some((c) => c.upgradeAgent));
    const cmd = agent.commands.find((c) => c.upgradeAgent);
    expect(cmd?.commandId).toBe(res.body.command_id);
    expect(cmd?.upgradeAgent).toEqual({
      version: NEXT,
      url: `https://cp.example.com/base/agent/${NEXT}/svc-agent-${NEXT}.mjs`,
      sha256: SUM,
    });
    expect((await view(node.id)).agent_upgrade).toMatchObject({ version: NEXT, state: 'pending', error: null, finished_at: null });
    const audit = await g.s.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'node.agent_upgrade_requested')
      .where('entity_id', '=', node.id)
      .execute();
    expect(audit.map((a) => a.details)).toEqual([{ command_id: res.body.command_id, from: '0.1.0', to: NEXT }]);

    agent.send({ upgradeResult: { commandId: res.body.command_id, success: true, error: '', agentVersion: NEXT } });
    await eventually(async () => expect((await view(node.id)).agent_upgrade.state).toBe('succeeded'));
    expect((await view(node.id)).agent_upgrade.finished_at).not.toBeNull();
  });

  it('a failed upgrade keeps the agent’s words (control characters and length bounded), raises node.agent_upgrade_failed once; a repeat, another command id or a late success changes nothing', async () => {
    const { node, agent } = await agentOf('0.1.0');
    const res = await ask(node.id);
    expect(res.status).toBe(202);
    const id = res.body.command_id as string;
    agent.send({ upgradeResult: { commandId: 'cmd_someone_else', success: true, error: '', agentVersion: NEXT } });
    agent.send({
      upgradeResult: { commandId: id, success: false, error: `the file does not match\x1b[31m ${'x'.repeat(2000)}`, agentVersion: '0.1.0' },
    });
    await eventually(async () => expect((await view(node.id)).agent_upgrade.state).toBe('failed'));
    agent.send({ upgradeResult: { commandId: id, success: false, error: 'again', agentVersion: '0.1.0' } });
    agent.send({ upgradeResult: { commandId: id, success: true, error: '', agentVersion: NEXT } });
    agent.sendStatus();
    await new Promise((r) => setTimeout(r, 300));
    const shown = (await view(node.id)).agent_upgrade;
    expect(shown.state).toBe('failed');
    expect(shown.error.startsWith('the file does not match [31m x')).toBe(true);
    expect(shown.error).toHaveLength(1000);
    const events = await g.s.deps.db.selectFrom('events').select('payload').where('type', '=', 'node.agent_upgrade_failed').execute();
    const mine = events.filter((e) => (e.payload as { node_id: string }).node_id === node.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]?.payload).toMatchObject({ node_id: node.id, version: NEXT, agent_version: '0.1.0' });
    // The stream survived all of it.
    expect((await view(node.id)).connectivity).toBe('online');
  });

  it('refuses, changing nothing: the current release (agent-current), a newer one, another implementation (agent-foreign), an offline node, a viewer, an unknown node', async () => {
    const { node: current, agent } = await agentOf(AGENT_RELEASE);
    const same = await ask(current.id);
    expect(same.status).toBe(409);
    expect(same.body).toMatchObject({ code: 'agent-current' });
    expect((await view(current.id)).agent_upgrade_available).toBeNull();
    const { node: newer } = await agentOf('99.0.0');
    expect((await ask(newer.id)).body.code).toBe('agent-current');
    const { node: foreign } = await agentOf('sim-1.0.0');
    expect((await ask(foreign.id)).body.code).toBe('agent-foreign');
    const { node: offline } = await g.nodeWithToken();
    expect((await ask(offline.id)).body.code).toBe('node-offline');
    const viewer = (await adminWithRole(g.s, await g.token(), 'viewer')).access_token;
    const { node: old, agent: oldAgent } = await agentOf('0.1.0');
    expect((await ask(old.id, viewer)).status).toBe(403);
    expect((await ask('nod_missing')).status).toBe(404);
    for (const id of [current.id, newer.id, foreign.id, offline.id, old.id]) expect((await view(id)).agent_upgrade).toBeNull();
    expect(agent.commands.some((c) => c.upgradeAgent)).toBe(false);
    expect(oldAgent.commands.some((c) => c.upgradeAgent)).toBe(false);
  });

  it('a node whose stream no replica holds is 409 node-offline, and its view is put back as it was', async () => {
    const { node } = await g.nodeWithToken();
    await g.s.deps.db.updateTable('nodes').set({ connectivity: 'online', agent_version: '0.1.0' }).where('id', '=', node.id).execute();
    const res = await ask(node.id);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('node-offline');
    expect((await view(node.id)).agent_upgrade).toBeNull();
  });
});

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AppProcess, type ControlPlane, fleetOverRest, issueEnrollToken, spawnApp, startControlPlane } from '@svc/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { agentEnv, enginePid, enrollAgent, killEngine, skipReason } from './loop.ts';

/**
 * `svc-agent run` stopped by Ctrl-C as by systemd (docs/operations.md, "Stopping"), against a
 * real control plane (`svc start`) whose log follows the agent: enrolled, connected,
 * disconnected, each with the node's id and name and the agent's address and version.
 */
const AGENT = 'apps/agent/src/main.ts';
let cp: ControlPlane | undefined;
let stateDir: string | undefined;
let agent: AppProcess | undefined;
afterAll(async () => {
  await agent?.kill();
  if (stateDir) await killEngine(stateDir);
  await cp?.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

const parsed = (p: AppProcess) =>
  p.lines.flatMap((l) => {
    try {
      return [JSON.parse(l) as Record<string, any>];
    } catch {
      return [];
    }
  });

describe.skipIf(skipReason !== null)('svc-agent run stops on Ctrl-C', () => {
  it('one Ctrl-C through pnpm (SIGINT twice, then SIGTERM) stops the agent and its engine: "agent stopped", exit 0; the control plane logged the agent enrolled, connected and disconnected', async () => {
    cp = await startControlPlane();
    stateDir = await mkdtemp(join(tmpdir(), 'svc-agent-stop-'));
    const node = await fleetOverRest.createNode(cp.api, { address: '127.0.0.1' });
    await enrollAgent(AGENT, stateDir, await issueEnrollToken(cp.api, node.id));
    const enrolled = await cp.process.waitForLog(/^agent enrolled/);
    expect(enrolled).toMatchObject({ node_id: node.id, node_name: node.name, address: '127.0.0.1' });

    agent = spawnApp(AGENT, agentEnv(stateDir), ['run']);
    await agent.waitForLog(/^agent started$/, 60_000);
    const connected = await cp.process.waitForLog(/^agent connected/);
    expect(connected).toMatchObject({
      node_id: node.id,
      node_name: node.name,
      address: '127.0.0.1',
      agent_version: enrolled.agent_version,
    });
    // The engine runs the node's first desired state (it follows the ServerClock on the stream).
    await agent.waitForLog(/^engine started$/, 60_000);
    const engine = await enginePid(stateDir);
    expect(engine).toBeGreaterThan(0);

    agent.child.kill('SIGINT');
    // pnpm's copies come a moment later (the kernel would merge a second SIGINT still pending).
    await new Promise((r) => setTimeout(r, 100));
    agent.child.kill('SIGINT');
    agent.child.kill('SIGTERM');
    expect(await agent.exited).toEqual({ code: 0, signal: null });
    const msgs = parsed(agent).map((l) => l.msg);
    expect(msgs.slice(msgs.indexOf('stopping'))).toEqual(expect.arrayContaining(['stopping', 'engine stopped', 'agent stopped']));
    expect(msgs.at(-1)).toBe('agent stopped');
    expect(parsed(agent).find((l) => l.msg === 'stopping')?.signal).toBe('SIGINT');
    expect(() => process.kill(engine as number, 0)).toThrow();

    const gone = await cp.process.waitForLog(/^agent disconnected/);
    expect(gone).toMatchObject({ node_id: node.id, node_name: node.name, session: connected.session });
  }, 180_000);
});

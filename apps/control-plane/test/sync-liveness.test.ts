import { Status } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Gateway, nodeRow, startGateway } from './harness.ts';

/** A gateway with short timeouts, so silence is observable in a test. */
let g: Gateway;
beforeAll(async () => {
  g = await startGateway({ gateway: { idleTimeoutMs: 600 } });
});
afterAll(() => g.stop());

describe('stream liveness: a silent agent is taken for dead', () => {
  it('no message within the idle timeout ends the stream with UNAVAILABLE and sets the node offline', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect();
    await eventually(async () => expect((await nodeRow(g, node.id)).connectivity).toBe('online'));
    const end = await agent.waitForEnd(5000);
    expect(end.code).toBe(Status.UNAVAILABLE);
    expect(end.details).toMatch(/no message from the agent/);
    await eventually(async () => expect((await nodeRow(g, node.id)).connectivity).toBe('offline'));
  });

  it('status reports keep the stream open past the idle timeout', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect();
    for (let i = 0; i < 6; i++) {
      agent.sendStatus();
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(agent.ended).toBeNull();
    expect((await nodeRow(g, node.id)).connectivity).toBe('online');
  });

  it('stopping the gateway ends every stream with UNAVAILABLE and sets its nodes offline at once', async () => {
    const other = await startGateway();
    const { node, agent } = await other.enrolledAgent();
    agent.connect();
    await eventually(async () => expect((await nodeRow(other, node.id)).connectivity).toBe('online'));
    await other.gateway.stop();
    expect((await agent.waitForEnd()).code).toBe(Status.UNAVAILABLE);
    expect((await nodeRow(other, node.id)).connectivity).toBe('offline');
    await other.s.stop();
  });
});

describe('a failing compile', () => {
  it('does not end the stream: the snapshot is retried and delivered', async () => {
    let failures = 2;
    const { compileDesiredState } = await import('@svc/desired-state');
    const holder: { g?: Gateway } = {};
    const flaky = await startGateway({
      gateway: {
        snapshots: async (nodeId) => {
          if (failures-- > 0) throw new Error('database briefly away');
          return compileDesiredState((holder.g as Gateway).s.deps, nodeId);
        },
      },
    });
    holder.g = flaky;
    try {
      const { agent } = await flaky.enrolledAgent();
      agent.connect();
      await agent.waitForRevision(1n, 8000);
      expect(agent.ended).toBeNull();
      expect(failures).toBeLessThan(0);
      expect(flaky.s.logs.some((l) => l.msg === 'desired state not compiled; retrying')).toBe(true);
    } finally {
      await flaky.stop();
    }
  });
});

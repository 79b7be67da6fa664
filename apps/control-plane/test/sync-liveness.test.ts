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

import { type AgentCommandRequest, type LogLine, LogTailHub, TOPICS } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Spec 6 "Log stream" at the domain verb: one admin surface's LogTailHub shares one agent tail
 * per node and source among its listeners, stops it when the last one leaves, and when the
 * surface stops, stops every tail it holds and opens no more.
 */

let bed: DomainTestbed;
/** Commands the bus carried to "the replica holding the stream", which accepts them and answers start_log_stream with a line. */
const commands: AgentCommandRequest[] = [];
beforeAll(async () => {
  bed = await createDomainTestbed();
  await bed.deps.bus.subscribe(TOPICS.agentCommands, (m) => {
    const request = m as AgentCommandRequest;
    commands.push(request);
    void bed.deps.bus.publish(request.reply_to, { type: 'accepted' });
    if (request.command.kind === 'start_log_stream') {
      const line: LogLine = { timestamp_ms: 1, source: request.command.source, line: `tail of ${request.node_id}` };
      void bed.deps.bus.publish(request.reply_to, { type: 'logs', entries: [line], eof: false });
    }
  });
});
afterAll(() => bed.close());

async function onlineNode() {
  const node = await fixtures(bed.ctx()).node();
  await bed.deps.db.updateTable('nodes').set({ connectivity: 'online' }).where('id', '=', node.id).execute();
  return node;
}

const kinds = (nodeId: string) => commands.filter((c) => c.node_id === nodeId).map((c) => c.command.kind);

const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
};

describe('LogTailHub: the live log tails of one admin surface', () => {
  it('two listeners of one node and source share one tail; the last to leave stops it', async () => {
    const hub = new LogTailHub(bed.deps.bus);
    const node = await onlineNode();
    const seen: string[][] = [[], []];
    const first = await hub.open(bed.ctx(), node.id, 'agent', (lines) => seen[0]?.push(...lines.map((l) => l.line)));
    const second = await hub.open(bed.ctx(), node.id, 'agent', (lines) => seen[1]?.push(...lines.map((l) => l.line)));
    expect(kinds(node.id)).toEqual(['start_log_stream']);
    expect(hub.size).toBe(1);
    // The tail's lines reach every listener.
    await until(() => (seen[0]?.length ?? 0) > 0);
    expect(seen[0]).toEqual([`tail of ${node.id}`]);
    await first();
    expect(kinds(node.id)).toEqual(['start_log_stream']);
    await second();
    await until(() => kinds(node.id).length === 2);
    expect(kinds(node.id)).toEqual(['start_log_stream', 'stop_log_stream']);
    const [start, stop] = commands.filter((c) => c.node_id === node.id);
    expect(stop?.command_id).toBe(start?.command_id);
    expect(hub.size).toBe(0);
  });

  it('stopping the hub stops every tail it holds (the agents are told) and refuses new listeners', async () => {
    const hub = new LogTailHub(bed.deps.bus);
    const a = await onlineNode();
    const b = await onlineNode();
    await hub.open(bed.ctx(), a.id, 'agent', () => {});
    await hub.open(bed.ctx(), b.id, 'xray', () => {});
    expect(hub.size).toBe(2);
    await hub.stop();
    await until(() => kinds(a.id).length === 2 && kinds(b.id).length === 2);
    expect(kinds(a.id)).toEqual(['start_log_stream', 'stop_log_stream']);
    expect(kinds(b.id)).toEqual(['start_log_stream', 'stop_log_stream']);
    expect(hub.size).toBe(0);
    await expect(hub.open(bed.ctx(), a.id, 'agent', () => {})).rejects.toMatchObject({ type: 'conflict', extra: { code: 'node-offline' } });
    expect(kinds(a.id)).toHaveLength(2);
  });

  it('two hubs (two admin surfaces in one process) hold their tails apart', async () => {
    const one = new LogTailHub(bed.deps.bus);
    const two = new LogTailHub(bed.deps.bus);
    const node = await onlineNode();
    await one.open(bed.ctx(), node.id, 'agent', () => {});
    const leave = await two.open(bed.ctx(), node.id, 'agent', () => {});
    expect(kinds(node.id)).toEqual(['start_log_stream', 'start_log_stream']);
    await two.stop();
    await leave();
    expect(one.size).toBe(1);
    await one.stop();
    await until(() => kinds(node.id).length === 4);
    expect(kinds(node.id)).toEqual(['start_log_stream', 'start_log_stream', 'stop_log_stream', 'stop_log_stream']);
  });

  it('an offline node gets no tail (node-offline) and an unknown one is not found; nothing is sent', async () => {
    const hub = new LogTailHub(bed.deps.bus);
    const node = await fixtures(bed.ctx()).node();
    await expect(hub.open(bed.ctx(), node.id, 'agent', () => {})).rejects.toMatchObject({
      type: 'conflict',
      extra: { code: 'node-offline' },
    });
    await expect(hub.open(bed.ctx(), 'nod_missing', 'agent', () => {})).rejects.toMatchObject({ type: 'not-found' });
    expect(kinds(node.id)).toEqual([]);
    expect(hub.size).toBe(0);
  });
});

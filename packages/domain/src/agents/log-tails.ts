import { NotFoundError } from '../errors.ts';
import { type MessageBus, TOPICS, type Unsubscribe } from '../shared/bus.ts';
import type { DomainContext } from '../shared/context.ts';
import { newId } from '../shared/ids.ts';
import {
  type AgentCommandRequest,
  dispatchAgentCommand,
  type LogLine,
  type LogSourceName,
  nodeOffline,
  replyTopic,
} from './agent-commands.ts';

type Listener = (lines: LogLine[]) => void;

interface Tail {
  commandId: string;
  listeners: Set<Listener>;
  ready: Promise<void>;
  stop: () => Promise<void>;
}

/**
 * GET /nodes/{id}/logs/stream (spec 6 "Log stream"): the live tails of one admin surface. Every
 * listener of one node and source shares one tail: the first listener sends start_log_stream,
 * the last one to leave sends stop_log_stream (same command id). When the node's stream is
 * opened again (agent reconnect, another replica) the tail is started again there, so listeners
 * keep receiving. The surface that makes the hub stops it (every tail stopped, the agents told).
 */
export class LogTailHub {
  private readonly tails = new Map<string, Tail>();
  private stopped = false;

  constructor(private readonly bus: MessageBus) {}

  /** Adds a listener to the node's tail of `source` (started if none); returns the function that removes it. */
  async open(ctx: DomainContext, nodeId: string, source: LogSourceName, listener: Listener): Promise<() => Promise<void>> {
    const node = await ctx.db.selectFrom('nodes').select(['id', 'connectivity']).where('id', '=', nodeId).executeTakeFirst();
    if (!node) throw new NotFoundError('node', nodeId);
    if (this.stopped) throw nodeOffline(nodeId);
    const tails = this.tails;
    const key = `${nodeId}:${source}`;
    let tail = tails.get(key);
    if (!tail) {
      if (node.connectivity !== 'online') throw nodeOffline(nodeId);
      tail = startTail(this.bus, nodeId, source, () => tails.delete(key));
      tails.set(key, tail);
    }
    const t = tail;
    t.listeners.add(listener);
    try {
      await t.ready;
    } catch (err) {
      t.listeners.delete(listener);
      throw err;
    }
    let removed = false;
    return async () => {
      if (removed) return;
      removed = true;
      t.listeners.delete(listener);
      if (t.listeners.size === 0 && tails.get(key) === t) {
        tails.delete(key);
        await t.stop();
      }
    };
  }

  /** Tails running now (node:source). */
  get size(): number {
    return this.tails.size;
  }

  /** Stops every tail (the agents get stop_log_stream) and opens no more. */
  async stop(): Promise<void> {
    this.stopped = true;
    const tails = [...this.tails.values()];
    this.tails.clear();
    await Promise.all(tails.map((t) => t.stop()));
  }
}

function startTail(bus: MessageBus, nodeId: string, source: LogSourceName, forget: () => void): Tail {
  const commandId = newId('cmd');
  const listeners = new Set<Listener>();
  const closers: Unsubscribe[] = [];
  const fanOut = (lines: LogLine[]) => {
    for (const l of [...listeners]) {
      try {
        l(lines);
      } catch {
        // One broken listener does not starve the others.
      }
    }
  };
  const restart: AgentCommandRequest = {
    node_id: nodeId,
    command_id: commandId,
    command: { kind: 'start_log_stream', source },
    reply_to: replyTopic(commandId),
  };
  const ready = (async () => {
    try {
      const started = await dispatchAgentCommand({ bus }, nodeId, restart.command, {
        commandId,
        onReply: (r) => r.type === 'logs' && r.entries.length > 0 && fanOut(r.entries),
      });
      closers.push(started.close);
      closers.push(
        await bus.subscribe(TOPICS.streamOpened, (m) => {
          if (openedStreams(m).some((o) => o.node_id === nodeId)) void bus.publish(TOPICS.agentCommands, restart).catch(() => {});
        }),
      );
    } catch (err) {
      forget();
      for (const c of closers) await c().catch(() => {});
      throw err;
    }
  })();
  ready.catch(() => {});
  return {
    commandId,
    listeners,
    ready,
    stop: async () => {
      await ready.catch(() => {});
      const stop: AgentCommandRequest = {
        node_id: nodeId,
        command_id: commandId,
        command: { kind: 'stop_log_stream' },
        reply_to: replyTopic(commandId),
      };
      await bus.publish(TOPICS.agentCommands, stop).catch(() => {});
      for (const c of closers) await c().catch(() => {});
    },
  };
}

/** A stream opened on a gateway replica, as announced on TOPICS.streamOpened. */
export interface OpenedStreamNotice {
  node_id: string;
  session: string;
  replica: string;
}

/**
 * The streams a TOPICS.streamOpened message announces: a gateway announces those of one turn
 * in one message (`{ streams: [...] }`, issue 17.3: a reconnecting fleet opens thousands a
 * second); a single `{ node_id, session, replica }` is read too.
 */
export function openedStreams(m: unknown): OpenedStreamNotice[] {
  if (typeof m !== 'object' || m === null) return [];
  const streams = (m as { streams?: unknown }).streams;
  const list = Array.isArray(streams) ? streams : [m];
  return list.filter(
    (o): o is OpenedStreamNotice =>
      typeof o === 'object' &&
      o !== null &&
      typeof (o as OpenedStreamNotice).node_id === 'string' &&
      typeof (o as OpenedStreamNotice).session === 'string',
  );
}

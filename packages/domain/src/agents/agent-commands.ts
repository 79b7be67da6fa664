import { recordAudit } from '../audit/record-audit.ts';
import { ConflictError, NotFoundError, TimeoutError, ValidationError } from '../errors.ts';
import { type MessageBus, TOPICS, type Unsubscribe } from '../shared/bus.ts';
import type { DomainContext } from '../shared/context.ts';
import { newId } from '../shared/ids.ts';

export type LogSourceName = 'agent' | 'xray';

/** A command for an agent, as it travels on the bus to the replica holding the node's stream. */
export type AgentCommand =
  | { kind: 'restart_xray' }
  | { kind: 'get_logs'; source: LogSourceName; limit: number }
  | { kind: 'start_log_stream'; source: LogSourceName }
  | { kind: 'stop_log_stream' }
  | { kind: 'upgrade_agent'; version: string; url: string; sha256: string };

export interface AgentCommandRequest {
  node_id: string;
  command_id: string;
  command: AgentCommand;
  /** Topic for the holder's acknowledgement and, for log commands, the LogBatch relays. */
  reply_to: string;
}

export interface LogLine {
  timestamp_ms: number;
  source: LogSourceName;
  line: string;
}

/** What travels back on `reply_to`. */
export type AgentReply = { type: 'accepted' } | { type: 'logs'; entries: LogLine[]; eof: boolean };

export const replyTopic = (commandId: string) => `${TOPICS.replies}${commandId}`;

/** How long the replica holding the stream has to say it took the command. */
const ACCEPT_TIMEOUT_MS = 3000;

export const nodeOffline = (nodeId: string) =>
  new ConflictError(`node ${nodeId} is offline: no agent stream is open`, undefined, { code: 'node-offline' });

/**
 * Hands a command to whichever gateway replica holds the node's stream (request/reply over
 * the bus, so the admin API and that replica may be different processes) and waits for it
 * to be taken. No taker within the timeout means no stream: 409 node-offline. The returned
 * subscription keeps receiving replies (LogBatch relays) until closed.
 */
export async function dispatchAgentCommand(
  deps: { bus: MessageBus },
  nodeId: string,
  command: AgentCommand,
  opts: { commandId?: string; onReply?: (reply: AgentReply) => void; acceptTimeoutMs?: number } = {},
): Promise<{ command_id: string; close: Unsubscribe }> {
  const command_id = opts.commandId ?? newId('cmd');
  let accept: () => void = () => {};
  const accepted = new Promise<void>((resolve) => {
    accept = resolve;
  });
  const close = await deps.bus.subscribe(replyTopic(command_id), (m) => {
    const reply = m as AgentReply;
    if (reply.type === 'accepted') accept();
    else opts.onReply?.(reply);
  });
  const request: AgentCommandRequest = { node_id: nodeId, command_id, command, reply_to: replyTopic(command_id) };
  let timer: NodeJS.Timeout | undefined;
  try {
    await deps.bus.publish(TOPICS.agentCommands, request);
    const taken = await Promise.race([
      accepted.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), opts.acceptTimeoutMs ?? ACCEPT_TIMEOUT_MS);
      }),
    ]);
    if (!taken) throw nodeOffline(nodeId);
  } catch (err) {
    await close();
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return { command_id, close };
}

async function onlineNode(ctx: DomainContext, nodeId: string) {
  const node = await ctx.db.selectFrom('nodes').select(['id', 'connectivity']).where('id', '=', nodeId).executeTakeFirst();
  if (!node) throw new NotFoundError('node', nodeId);
  if (node.connectivity !== 'online') throw nodeOffline(nodeId);
  return node;
}

/** POST /nodes/{id}/restart-xray: the agent restarts the engine; 202 with the command id. */
export async function restartXray(ctx: DomainContext, nodeId: string): Promise<{ command_id: string }> {
  await onlineNode(ctx, nodeId);
  const { command_id, close } = await dispatchAgentCommand(ctx, nodeId, { kind: 'restart_xray' });
  await close();
  await recordAudit(ctx, { action: 'node.xray_restart_requested', entity_type: 'node', entity_id: nodeId, details: { command_id } });
  return { command_id };
}

export const LOG_LIMIT_MAX = 5000;

export function parseLogSource(v: string | undefined, field = 'source'): LogSourceName {
  if (v === undefined || v === 'xray') return 'xray';
  if (v === 'agent') return 'agent';
  throw new ValidationError('invalid log source', { [field]: 'must be agent or xray' });
}

/**
 * GET /nodes/{id}/logs: the last `limit` lines of the agent's or the engine's log, as the
 * agent sends them back (LogBatch messages until eof). No eof within the timeout: 504.
 */
export async function fetchNodeLogs(
  ctx: DomainContext,
  nodeId: string,
  q: { source: LogSourceName; limit: number },
  timeoutMs = ctx.config.grpc.command_timeout_seconds * 1000,
): Promise<{ node_id: string; source: LogSourceName; lines: LogLine[] }> {
  if (!Number.isInteger(q.limit) || q.limit < 1 || q.limit > LOG_LIMIT_MAX) {
    throw new ValidationError('invalid limit', { limit: `must be an integer from 1 to ${LOG_LIMIT_MAX}` });
  }
  await onlineNode(ctx, nodeId);
  const lines: LogLine[] = [];
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  const started = Date.now();
  const { close } = await dispatchAgentCommand(
    ctx,
    nodeId,
    { kind: 'get_logs', source: q.source, limit: q.limit },
    {
      onReply: (reply) => {
        if (reply.type !== 'logs') return;
        for (const l of reply.entries) if (lines.length < q.limit) lines.push(l);
        if (reply.eof) done();
      },
    },
  );
  let timer: NodeJS.Timeout | undefined;
  try {
    const ok = await Promise.race([
      finished.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), Math.max(0, timeoutMs - (Date.now() - started)));
      }),
    ]);
    if (!ok) throw new TimeoutError(`node ${nodeId} did not send its logs within ${Math.round(timeoutMs / 1000)} s`);
  } finally {
    clearTimeout(timer);
    await close();
  }
  return { node_id: nodeId, source: q.source, lines };
}

import type { AgentMessage, Command, LogEntry } from '@svc/proto';
import type { Logger } from 'pino';
import type { LogLine, LogRings } from './log-rings.ts';

/**
 * get_logs and live tails (spec 4.1 rule 5). A snapshot is the last N lines (N clamped to
 * 1-5000) in batches, the last one with eof; a tail sends what was logged since the previous
 * batch every 250 ms until stop_log_stream names its command id or the stream ends.
 */
export const MAX_LOG_LINES = 5000;
const BATCH_LINES = 500;
const BATCH_BYTES = 1024 * 1024;
const TAIL_EVERY_MS = 250;

const entry = (l: LogLine): LogEntry => ({ timestampMs: BigInt(l.timestampMs), source: l.source, line: l.line });

function* batches(lines: LogLine[]): Generator<LogEntry[]> {
  let batch: LogEntry[] = [];
  let bytes = 0;
  for (const l of lines) {
    if (batch.length >= BATCH_LINES || bytes + l.line.length * 3 > BATCH_BYTES) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(entry(l));
    bytes += l.line.length * 3 + 16;
  }
  yield batch;
}

export class LogCommands {
  private readonly tails = new Map<string, { stop: () => void }>();

  constructor(
    private readonly rings: LogRings,
    private readonly send: (m: AgentMessage) => void,
    private readonly log?: Logger,
  ) {}

  getLogs(c: Command): void {
    const ring = c.getLogs ? this.rings.of(c.getLogs.source) : null;
    const limit = Math.max(1, Math.min(MAX_LOG_LINES, c.getLogs?.limit || MAX_LOG_LINES));
    const lines = ring ? ring.last(limit) : [];
    const all = [...batches(lines)];
    for (const [i, entries] of all.entries()) this.send({ logs: { commandId: c.commandId, entries, eof: i === all.length - 1 } });
  }

  startTail(c: Command): void {
    const ring = c.startLogStream ? this.rings.of(c.startLogStream.source) : null;
    this.stopTail(c.commandId);
    if (!ring) return;
    this.log?.debug({ command_id: c.commandId, source: c.startLogStream?.source }, 'log tail started');
    let pending: LogLine[] = [];
    const unfollow = ring.follow((l) => {
      if (pending.length < MAX_LOG_LINES) pending.push(l);
    });
    const timer = setInterval(() => {
      if (pending.length === 0) return;
      const lines = pending;
      pending = [];
      for (const entries of batches(lines)) this.send({ logs: { commandId: c.commandId, entries, eof: false } });
    }, TAIL_EVERY_MS);
    this.tails.set(c.commandId, {
      stop: () => {
        unfollow();
        clearInterval(timer);
      },
    });
  }

  stopTail(commandId: string): void {
    const tail = this.tails.get(commandId);
    if (!tail) return;
    tail.stop();
    this.tails.delete(commandId);
    this.log?.debug({ command_id: commandId }, 'log tail stopped');
  }

  stopAll(): void {
    for (const id of [...this.tails.keys()]) this.stopTail(id);
  }
}

import { Writable } from 'node:stream';
import { LogSource } from '@svc/proto';

/**
 * The last lines of the agent's own log and of the engine's stdout/stderr, in memory, for
 * get_logs and live tails (spec 4.1 rule 5). Bounded by lines and by bytes; a line longer than
 * MAX_LINE is cut (an engine can echo what a client sent). NUL is dropped: it is not text the
 * gateway stores.
 */
export interface LogLine {
  timestampMs: number;
  source: LogSource;
  line: string;
}

export const MAX_LINE = 4096;

export class LogRing {
  private readonly lines: LogLine[] = [];
  private start = 0;
  private readonly listeners = new Set<(l: LogLine) => void>();

  constructor(
    readonly source: LogSource,
    readonly capacity = 5000,
  ) {}

  push(text: string, timestampMs = Date.now()): void {
    const clean = text.replaceAll('\u0000', '');
    const entry: LogLine = {
      timestampMs,
      source: this.source,
      line: clean.length > MAX_LINE ? `${clean.slice(0, MAX_LINE)}…` : clean,
    };
    if (this.lines.length - this.start >= this.capacity) this.start++;
    this.lines.push(entry);
    // Compact now and then instead of shifting on every push.
    if (this.start >= this.capacity) {
      this.lines.splice(0, this.start);
      this.start = 0;
    }
    for (const l of this.listeners) l(entry);
  }

  /** The last `limit` lines, oldest first. */
  last(limit: number): LogLine[] {
    const n = Math.max(0, Math.min(limit, this.lines.length - this.start));
    return this.lines.slice(this.lines.length - n);
  }

  /** Calls `listener` for every line pushed from now on; returns the unsubscribe. */
  follow(listener: (l: LogLine) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export class LogRings {
  readonly agent = new LogRing(LogSource.AGENT);
  readonly engine = new LogRing(LogSource.XRAY);

  of(source: LogSource): LogRing | null {
    if (source === LogSource.AGENT) return this.agent;
    if (source === LogSource.XRAY) return this.engine;
    return null;
  }

  /** A stream the agent's logger writes to besides stdout: each JSON line into the AGENT ring. */
  agentSink(): Writable {
    let rest = '';
    return new Writable({
      write: (chunk: Buffer, _enc, done) => {
        const text = rest + chunk.toString('utf8');
        const parts = text.split('\n');
        rest = parts.pop() ?? '';
        for (const p of parts) if (p !== '') this.agent.push(p);
        done();
      },
    });
  }
}

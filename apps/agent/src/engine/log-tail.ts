import { type FSWatcher, watch } from 'node:fs';
import { open, stat, truncate } from 'node:fs/promises';

/**
 * Follows the engine's log file. The engine writes its stdout and stderr to a file (opened
 * O_APPEND) rather than to a pipe: a pipe dies with the agent, and an engine whose stdout is a
 * dead pipe exits on its next log line, so a crashed agent would take the engine, and its
 * uncounted traffic, with it. Lines are handed on as they come; the file is emptied once it
 * passes `maxBytes` and everything in it was read (O_APPEND writers continue at the new end).
 * The file is read when inotify says it changed (device limits end a refused connection as
 * soon as its access line is written), and every `intervalMs` in any case.
 */
export class LogTail {
  private offset = 0;
  private rest = '';
  private timer: NodeJS.Timeout | null = null;
  private busy = false;
  /** A change came while a read was under way: read again after it. */
  private again = false;
  private watcher: FSWatcher | null = null;

  constructor(
    readonly file: string,
    private readonly onLine: (line: string) => void,
    private readonly maxBytes = 16 * 1024 * 1024,
  ) {}

  /** Starts following; `fromEnd` skips what the file holds already. */
  async start(fromEnd: boolean, intervalMs = 200): Promise<void> {
    this.offset = fromEnd
      ? await stat(this.file).then(
          (s) => s.size,
          () => 0,
        )
      : 0;
    this.timer = setInterval(() => void this.poll(), intervalMs);
    this.timer.unref();
    try {
      this.watcher = watch(this.file, { persistent: false }, () => void this.poll());
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = null;
      });
    } catch {
      // No file yet, or no inotify: the interval alone.
    }
  }

  /** Reads what is new now. */
  async poll(): Promise<void> {
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    this.again = false;
    try {
      const size = await stat(this.file).then(
        (s) => s.size,
        () => -1,
      );
      if (size < 0) return;
      if (size < this.offset) this.offset = 0;
      if (size > this.offset) {
        const handle = await open(this.file, 'r');
        try {
          const length = Math.min(size - this.offset, 4 * 1024 * 1024);
          const buf = Buffer.alloc(length);
          const { bytesRead } = await handle.read(buf, 0, length, this.offset);
          this.offset += bytesRead;
          const parts = (this.rest + buf.subarray(0, bytesRead).toString('utf8')).split('\n');
          this.rest = parts.pop() ?? '';
          if (this.rest.length > 64 * 1024) this.rest = '';
          for (const p of parts) if (p !== '') this.onLine(p.endsWith('\r') ? p.slice(0, -1) : p);
        } finally {
          await handle.close();
        }
      }
      if (this.offset >= this.maxBytes && this.offset === size) {
        await truncate(this.file, 0).catch(() => {});
        this.offset = 0;
      }
    } finally {
      this.busy = false;
    }
    if (this.again && this.timer) await this.poll();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.watcher?.close();
    this.watcher = null;
  }
}

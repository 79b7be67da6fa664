import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { open } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { LogRing } from '../log-rings.ts';
import { readOptional, writeFileAtomic } from '../state-files.ts';
import { type EngineSettings, engineArgs } from './engine-settings.ts';
import { LogTail } from './log-tail.ts';
import { isSameProcess, processStartTicks } from './proc.ts';

/**
 * The engine process: started by the agent in a session of its own with its output going to a
 * file (log-tail.ts), so it outlives a crash of the agent; its pid, start time and API port are
 * kept in engine.json, and an agent that starts while its engine still runs adopts it (users
 * keep their connections, the counters are still there to be read). An engine that exits on its
 * own is reported with the `exit` event; restarting it is the caller's decision.
 */
export interface EngineRecord {
  pid: number;
  startTicks: string;
  apiPort: number;
  startedAtMs: number;
  configFile: string;
}

export class EngineStartError extends Error {
  override name = 'EngineStartError';
}

const READY_TIMEOUT_MS = 15_000;

export class EngineProcess extends EventEmitter<{ exit: [EngineRecord] }> {
  private current: EngineRecord | null = null;
  private watch: NodeJS.Timeout | null = null;
  private readonly tail: LogTail;
  private stopping = false;

  constructor(
    readonly settings: EngineSettings,
    readonly dir: string,
    private readonly ring: LogRing,
    private readonly log: Logger,
    private readonly onLine: (line: string) => void = () => {},
  ) {
    super();
    this.tail = new LogTail(this.logFile, (line) => {
      this.ring.push(line);
      this.onLine(line);
    });
  }

  get logFile(): string {
    return join(this.dir, 'engine.log');
  }

  private get recordFile(): string {
    return join(this.dir, 'engine.json');
  }

  /** The running engine's pid, start time and API port (null when none runs). */
  get record(): EngineRecord | null {
    return this.current;
  }

  get running(): boolean {
    return this.current !== null;
  }

  /** Names this engine process: counters read from another instance start again from zero. */
  get instance(): string | null {
    return this.current ? `${this.current.pid}:${this.current.startTicks}` : null;
  }

  uptimeSeconds(now = Date.now()): number {
    return this.current ? Math.max(0, Math.floor((now - this.current.startedAtMs) / 1000)) : 0;
  }

  /** Starts following the log file (new lines only). */
  async follow(): Promise<void> {
    await this.tail.start(true);
  }

  /** Takes over the engine a previous agent left running, if engine.json names a live one. */
  async adopt(): Promise<EngineRecord | null> {
    const text = await readOptional(this.recordFile);
    if (!text) return null;
    let rec: EngineRecord;
    try {
      rec = JSON.parse(text) as EngineRecord;
    } catch {
      return null;
    }
    if (!Number.isInteger(rec.pid) || !(await isSameProcess(rec.pid, rec.startTicks))) return null;
    this.current = rec;
    this.watchLiveness();
    this.log.info({ pid: rec.pid, api_port: rec.apiPort }, 'engine left running by the previous agent adopted');
    return rec;
  }

  /** Starts the engine on `configFile`; resolves once its API port accepts connections. */
  async start(configFile: string, apiPort: number): Promise<EngineRecord> {
    if (this.current) throw new Error('the engine is already running');
    const out = await open(this.logFile, 'a', 0o600);
    let child: ReturnType<typeof spawn>;
    let spawned: Promise<number>;
    let exited = false;
    try {
      child = spawn(this.settings.bin, engineArgs.run(this.settings.flavour, configFile), {
        detached: true,
        stdio: ['ignore', out.fd, out.fd],
        cwd: this.dir,
      });
      // Listened to before anything is awaited: 'spawn' comes on a later tick.
      spawned = new Promise<number>((resolve, reject) => {
        child.once('spawn', () => resolve(child.pid as number));
        child.once('error', (err) => reject(new EngineStartError(`cannot start ${this.settings.bin}: ${err.message}`)));
      });
      child.once('exit', () => {
        exited = true;
      });
    } finally {
      await out.close();
    }
    const pid = await spawned;
    child.unref();
    const startTicks = (await processStartTicks(pid)) ?? '0';
    const rec: EngineRecord = { pid, startTicks, apiPort, startedAtMs: Date.now(), configFile };
    const ready = await waitForPort(apiPort, READY_TIMEOUT_MS, () => exited);
    if (!ready) {
      if (!exited) child.kill('SIGKILL');
      await this.tail.poll();
      const last = this.ring
        .last(20)
        .map((l) => l.line)
        .join('\n');
      throw new EngineStartError(
        exited ? `the engine exited at start:\n${last}` : `the engine did not open its API port within ${READY_TIMEOUT_MS} ms:\n${last}`,
      );
    }
    this.current = rec;
    await writeFileAtomic(this.recordFile, JSON.stringify(rec));
    child.once('exit', () => void this.checkLiveness());
    this.watchLiveness();
    this.log.info({ pid: rec.pid, api_port: apiPort }, 'engine started');
    return rec;
  }

  /** Stops the engine: SIGTERM, SIGKILL after `graceMs`. */
  async stop(graceMs = 5000): Promise<void> {
    const rec = this.current;
    if (!rec) return;
    this.stopping = true;
    try {
      signal(rec.pid, 'SIGTERM');
      const deadline = Date.now() + graceMs;
      while ((await isSameProcess(rec.pid, rec.startTicks)) && Date.now() < deadline) await sleep(50);
      if (await isSameProcess(rec.pid, rec.startTicks)) {
        signal(rec.pid, 'SIGKILL');
        while (await isSameProcess(rec.pid, rec.startTicks)) await sleep(20);
      }
      this.current = null;
      this.unwatch();
      this.log.info({ pid: rec.pid }, 'engine stopped');
    } finally {
      this.stopping = false;
    }
  }

  /** Stops following the log and watching the process; the engine itself keeps running. */
  detach(): void {
    this.unwatch();
    this.tail.stop();
  }

  private watchLiveness(): void {
    this.unwatch();
    this.watch = setInterval(() => void this.checkLiveness(), 1000);
    this.watch.unref();
  }

  private unwatch(): void {
    if (this.watch) clearInterval(this.watch);
    this.watch = null;
  }

  private async checkLiveness(): Promise<void> {
    const rec = this.current;
    if (!rec || this.stopping) return;
    if (await isSameProcess(rec.pid, rec.startTicks)) return;
    if (this.current !== rec) return;
    this.current = null;
    this.unwatch();
    await this.tail.poll().catch(() => {});
    this.log.warn({ pid: rec.pid }, 'the engine exited');
    this.emit('exit', rec);
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Already gone.
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitForPort(port: number, timeoutMs: number, gaveUp: () => boolean): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !gaveUp()) {
    const open = await new Promise<boolean>((resolve) => {
      const s = connect({ host: '127.0.0.1', port }, () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (open) return true;
    await sleep(100);
  }
  return false;
}

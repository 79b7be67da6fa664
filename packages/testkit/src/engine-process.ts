import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { lineWaiter } from './line-waiter.ts';

/**
 * A real engine process for end-to-end tests: Debian's `v2ray` (4.x, `v2ray -config <file>`)
 * started on a JSON config written to a temp dir of its own, with its output collected line by
 * line (the access log goes to stdout when the config names no file). Used as the server a test
 * node runs and as the client that connects through it.
 */

export interface EngineProcess {
  child: ChildProcess;
  /** The config file the engine runs on (in a temp dir removed when the process ends). */
  configFile: string;
  /** stdout and stderr lines so far, in arrival order. */
  lines: string[];
  /** Resolves with the first output line (seen or to come) matching; rejects if the process exits first. */
  waitForLine(pred: (line: string) => boolean, what: string, timeoutMs?: number): Promise<string>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code (null when killed by a signal). */
  stop(graceMs?: number): Promise<number | null>;
  /** SIGKILL (kill -9). */
  kill(): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface StartEngineOptions {
  /** Ports the config listens on; the start resolves once each accepts TCP connections. */
  waitForPorts: number[];
  /** Names the config file (for reading failures); default `engine`. */
  name?: string;
  /** How long the ports may take to open; default 20 s. */
  timeoutMs?: number;
}

/** Ports this process handed out (the most recent 4,096): the OS may pick a closed one again at once. */
const handedOut = new Set<number>();

function osPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * A TCP port nothing listened on a moment ago (the OS's pick on 127.0.0.1), never one this
 * process handed out before: a caller binds it later, and two picks in a row can be the same
 * port (CI on da56e42: two inbounds of one node got one port, 409).
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await osPort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (handedOut.size > 4096) handedOut.delete(handedOut.values().next().value as number);
    return port;
  }
  throw new Error('no port the OS picked was new to this process in 50 tries');
}

/** Whether 127.0.0.1:port accepts a TCP connection now. */
export function portAccepts(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Starts `v2ray -config <file>` on `config`; resolves once every port of `waitForPorts` accepts connections. */
export async function startV2ray(config: unknown, opts: StartEngineOptions): Promise<EngineProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-testkit-engine-'));
  const configFile = join(dir, `${(opts.name ?? 'engine').replace(/[^A-Za-z0-9-]+/g, '_')}.json`);
  await writeFile(configFile, JSON.stringify(config, null, 2));
  const child = spawn('v2ray', ['-config', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  const engine = watch(child, configFile);
  void engine.exited.then(() => rm(dir, { recursive: true, force: true }));

  const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
  const pending = new Set(opts.waitForPorts);
  while (pending.size > 0) {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined)
      throw new Error(`v2ray (${configFile}) exited before listening:\n${engine.lines.join('\n')}`);
    if (Date.now() > deadline) {
      await engine.kill();
      throw new Error(`v2ray (${configFile}) did not open ports ${[...pending].join(', ')}:\n${engine.lines.join('\n')}`);
    }
    for (const port of [...pending]) if (await portAccepts(port)) pending.delete(port);
    if (pending.size > 0) await new Promise((r) => setTimeout(r, 50));
  }
  return engine;
}

function watch(child: ChildProcess, configFile: string): EngineProcess {
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    // A binary that cannot be spawned never exits; it errors.
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  const output = lineWaiter(exited, () => `v2ray (${configFile}) output:\n${output.lines.join('\n')}`);
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', output.see);
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', output.see);
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    configFile,
    lines: output.lines,
    exited,
    waitForLine: (pred, what, timeoutMs = 20_000) => output.waitFor(pred, what, timeoutMs),
    async stop(graceMs = 10_000) {
      if (!running()) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const e = await exited;
      clearTimeout(timer);
      return e.code;
    },
    async kill() {
      if (!running()) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

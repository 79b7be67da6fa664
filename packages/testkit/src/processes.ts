import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { appEntry } from './app-entry.ts';
import { lineWaiter } from './line-waiter.ts';

/** The repository root (where apps/ lives). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

export interface AppProcess {
  child: ChildProcess;
  lines: string[];
  stderr(): string;
  /** Resolves with the first stdout line (already seen or to come) matching; rejects if the process exits first. */
  waitForLine(pred: (line: string) => boolean, what: string, timeoutMs?: number): Promise<string>;
  /** The first JSON log line whose msg matches, parsed. */
  waitForLog(msg: RegExp, timeoutMs?: number): Promise<Record<string, any>>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
  kill(): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** SIGTERM to a child still running, SIGKILL after `graceMs`; resolves once it exited. */
export async function stopChild(child: ChildProcess, exited: Promise<unknown>, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Environment an operator would set: nothing of the test runner's SVC_*, database or Redis leaks in. */
export function operatorEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('SVC_') || k === 'DATABASE_URL' || k === 'REDIS_URL' || k.startsWith('VITEST') || k === 'NODE_OPTIONS') continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

/**
 * Starts one deployable as a separate process, as compose would: `apps/<app>/src/main.ts` runs as
 * the app's fresh precompiled bundle, or under tsx (app-entry.ts); an entry that is already
 * JavaScript runs as it is.
 */
export function spawnApp(entry: string, env: Record<string, string>, args: string[] = []): AppProcess {
  const child = spawn(process.execPath, [...appEntry(entry).argv, ...args], {
    cwd: REPO_ROOT,
    env: operatorEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (s: string) => {
    stderr += s;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once('exit', (code, signal) => r({ code, signal })),
  );
  const output = lineWaiter(exited, () => `${entry} stdout:\n${output.lines.join('\n')}\nstderr:\n${stderr}`);
  const lines = output.lines;
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', output.see);
  const app: AppProcess = {
    child,
    lines,
    stderr: () => stderr,
    exited,
    waitForLine: (pred, what, timeoutMs = 30_000) => output.waitFor(pred, what, timeoutMs),
    async waitForLog(msg, timeoutMs) {
      const parse = (l: string) => {
        try {
          return JSON.parse(l) as Record<string, any>;
        } catch {
          return null;
        }
      };
      return parse(await app.waitForLine((l) => msg.test(String(parse(l)?.msg ?? '')), String(msg), timeoutMs)) as Record<string, any>;
    },
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const e = await exited;
      clearTimeout(timer);
      return e.code;
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
  return app;
}

// The life of a benchmark run: numbers from the environment, formatting, cleanup (child
// processes die with us; what a run set up is undone on the way out, whatever happens), the
// machine and commit measured, and the results section.
import { type ChildProcess, execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** bench/ */
export const BENCH_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
export const BENCHMARKS_MD = join(BENCH_DIR, 'BENCHMARKS.md');

export const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
export const n = (x: number) => Math.round(x).toLocaleString('en-US');
export const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
export const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number) : Number.NaN;
};
export const log = (msg: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

// ---- cleanup: child processes die with us; what a run set up (schema, temp dirs) is undone on the way out.

const children = new Set<ChildProcess>();
const cleanups: Array<() => Promise<void>> = [];
let cleaning: Promise<void> | undefined;

export function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}
export const onCleanup = (fn: () => Promise<void>) => cleanups.push(fn);

/** A temporary directory, removed at the end of the run. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onCleanup(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const fn of cleanups.reverse()) await fn().catch((err) => log(`cleanup: ${(err as Error).message}`));
    for (const c of children) c.kill('SIGKILL');
  })();
  return cleaning;
}
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    log(`${sig}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

/** Runs a benchmark: whatever happens, children are killed and the schema dropped. */
export async function main(fn: () => Promise<void>): Promise<never> {
  let code = 0;
  try {
    await fn();
  } catch (err) {
    process.stderr.write(`${(err as Error).stack ?? err}\n`);
    code = 1;
  }
  await cleanup();
  process.exit(code);
}

// ---- the machine

/** `uptime`'s 1-minute load; waits (60 s at a time, BENCH_LOAD_RETRIES times) while it is above 1.5. */
export async function quietMachine(): Promise<string> {
  const retries = env('BENCH_LOAD_RETRIES', 5);
  const load1 = () => loadavg()[0] ?? 0;
  for (let i = 0; load1() > 1.5 && i < retries; i++) {
    log(`load average ${load1().toFixed(2)} > 1.5: other work is running, waiting 60 s (${i + 1}/${retries})`);
    await sleep(60_000);
  }
  return loadNow();
}

export const loadNow = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');

export function machine(): string {
  return `${cpus()[0]?.model ?? 'cpu'} ×${availableParallelism()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

/** The commit measured, marked when apps/ or packages/ differ from it. */
export function revision(): string {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: join(BENCH_DIR, '..') })
        .toString()
        .trim();
    const dirty = git('status', '--porcelain', '--', 'apps', 'packages') !== '';
    return `${git('rev-parse', '--short', 'HEAD')}${dirty ? ' with uncommitted changes in apps/ or packages/' : ''}`;
  } catch {
    return 'unknown';
  }
}

// ---- results

/**
 * How a results section starts: the machine, the PostgreSQL server, the commit, and the load
 * averages taken during the run, each under its label ("before", "after", ...).
 */
export function setting(postgres: string, loads: Record<string, string>): string {
  const taken = Object.entries(loads)
    .map(([label, load]) => `${label}: ${load}`)
    .join('; ');
  return `Machine: ${machine()}, PostgreSQL ${postgres}. Commit ${revision()}. Load average (1/5/15 min) ${taken}. `;
}

/** Prints the section and appends it to bench/BENCHMARKS.md. */
export function publish(lines: string[]): void {
  const text = `${lines.join('\n')}\n`;
  process.stdout.write(text);
  if (process.env.BENCH_NO_APPEND) return;
  appendFileSync(BENCHMARKS_MD, `\n${text}`);
  log(`appended to ${BENCHMARKS_MD}`);
}

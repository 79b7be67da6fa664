import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { SAME_STOP_WINDOW_MS } from './stop-on-signals.ts';

// The stop every deployable shares (docs/operations.md, "Stopping"), in a real process that
// gets real signals.
const FIXTURE = fileURLToPath(new URL('./stop-on-signals.fixture.ts', import.meta.url));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

async function fixture(stopMs: number, outcome: 'ok' | 'fail' = 'ok') {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, String(stopMs), outcome], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (s: string) => {
    out += s;
  });
  child.stderr?.setEncoding('utf8').on('data', (s: string) => {
    err += s;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once('exit', (code, signal) => r({ code, signal })),
  );
  const ready = new Promise<void>((resolve) => child.stdout?.on('data', () => out.includes('ready') && resolve()));
  await Promise.race([ready, exited.then(() => Promise.reject(new Error(`fixture exited early: ${err}`)))]);
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { child, exited, lines, stderr: () => err };
}

describe('stopOnSignals: SIGINT and SIGTERM stop alike', () => {
  it('SIGINT stops cleanly: "stopping", "stopped", exit 0', async () => {
    const p = await fixture(100);
    p.child.kill('SIGINT');
    expect(await p.exited).toEqual({ code: 0, signal: null });
    expect(p.lines().map((l) => [l.msg, l.signal, l.svc])).toEqual([
      ['stopping', 'SIGINT', 'fixture'],
      ['stopped', 'SIGINT', 'fixture'],
    ]);
    expect(p.stderr()).toBe('');
  });

  it('one Ctrl-C through pnpm (SIGINT from the terminal, SIGINT forwarded, SIGTERM) is one stop: exit 0', async () => {
    const p = await fixture(500);
    p.child.kill('SIGINT');
    p.child.kill('SIGINT');
    p.child.kill('SIGTERM');
    expect(await p.exited).toEqual({ code: 0, signal: null });
    expect(p.lines().map((l) => l.msg)).toEqual(['stopping', 'stopped']);
  });

  it('a signal after the window, while the stop runs, ends the process at once: 128 + its number', async () => {
    const p = await fixture(30_000);
    p.child.kill('SIGINT');
    await new Promise((r) => setTimeout(r, SAME_STOP_WINDOW_MS + 300));
    p.child.kill('SIGINT');
    expect(await p.exited).toEqual({ code: 130, signal: null });
    expect(p.stderr()).toContain('fixture: SIGINT during the stop; exiting at once');
  });

  it('a stop that fails exits 1, saying so on stderr', async () => {
    const p = await fixture(0, 'fail');
    p.child.kill('SIGTERM');
    expect(await p.exited).toEqual({ code: 1, signal: null });
    expect(p.stderr()).toContain('fixture: stop failed: Error: the close failed');
    expect(p.lines().map((l) => l.msg)).toEqual(['stopping']);
  });
});

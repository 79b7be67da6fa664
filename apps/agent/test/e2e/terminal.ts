import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { operatorEnv, REPO_ROOT } from '@svc/testkit';

/**
 * A shell as a person has one open: one bash process that keeps its variables and functions
 * from block to block, fed the documentation's blocks one after the other. `set -eo pipefail`
 * makes a failing command end it, so a block that breaks fails the test with what it printed.
 */
export class Terminal {
  private readonly child: ChildProcess;
  private out = '';
  private err = '';
  private exited: { code: number | null } | null = null;
  private wake: (() => void) | null = null;
  private n = 0;

  constructor(env: Record<string, string> = {}, cwd = REPO_ROOT) {
    this.child = spawn('bash', ['--noprofile', '--norc'], { cwd, env: operatorEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout?.setEncoding('utf8').on('data', (s: string) => {
      this.out += s;
      this.wake?.();
    });
    this.child.stderr?.setEncoding('utf8').on('data', (s: string) => {
      this.err += s;
    });
    this.child.once('exit', (code) => {
      this.exited = { code };
      this.wake?.();
    });
    this.child.stdin?.write('set -eo pipefail\n');
  }

  /** Runs a block; resolves with what it printed on stdout once it finished. */
  async run(block: string, timeoutMs = 120_000): Promise<string> {
    const marker = `__block_${++this.n}_done__`;
    const from = this.out.length;
    const errFrom = this.err.length;
    this.child.stdin?.write(`${block}\necho ${marker}\n`);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const at = this.out.indexOf(`${marker}\n`, from);
      if (at >= 0) return this.out.slice(from, at);
      if (this.exited || Date.now() > deadline)
        throw new Error(
          `${this.exited ? `the shell ended (exit ${this.exited.code})` : `no end within ${timeoutMs} ms`} running:\n${block}\n--- stdout:\n${this.out.slice(from)}\n--- stderr:\n${this.err.slice(errFrom)}`,
        );
      await new Promise<void>((r) => {
        this.wake = r;
        setTimeout(r, 250);
      });
    }
  }

  close(): void {
    if (!this.exited) this.child.kill('SIGKILL');
  }
}

/**
 * The shell blocks of a Markdown file that follow an `<!-- walkthrough: name -->` comment, by
 * name: what the documentation tells a person to type, read from the file itself.
 */
export function walkthroughBlocks(file: string): Map<string, string> {
  const text = readFileSync(join(REPO_ROOT, file), 'utf8');
  const blocks = new Map<string, string>();
  const re = /<!-- walkthrough: ([a-z0-9-]+) -->\n```sh\n([\s\S]*?)\n```/g;
  for (let m = re.exec(text); m; m = re.exec(text)) blocks.set(m[1] as string, m[2] as string);
  return blocks;
}

export function block(blocks: Map<string, string>, name: string): string {
  const b = blocks.get(name);
  if (b === undefined) throw new Error(`no walkthrough block "${name}" (have: ${[...blocks.keys()].join(', ')})`);
  return b;
}

/**
 * A command a person leaves running in a terminal of its own (`svc-agent run`): a process group
 * of its own, its stdout lines kept, and Ctrl-C (SIGINT to the group) to stop it.
 */
export class Foreground {
  private readonly child: ChildProcess;
  readonly lines: string[] = [];
  private readonly exit: Promise<number | null>;

  constructor(line: string, env: Record<string, string>, cwd = REPO_ROOT) {
    this.child = spawn('bash', ['--noprofile', '--norc', '-c', line], {
      cwd,
      env: operatorEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let partial = '';
    const take = (s: string) => {
      partial += s;
      const parts = partial.split('\n');
      partial = parts.pop() ?? '';
      this.lines.push(...parts);
    };
    this.child.stdout?.setEncoding('utf8').on('data', take);
    this.child.stderr?.setEncoding('utf8').on('data', take);
    this.exit = new Promise((r) => this.child.once('exit', (code) => r(code)));
  }

  async waitFor(pred: (line: string) => boolean, what: string, timeoutMs = 120_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.lines.find(pred);
      if (found !== undefined) return found;
      if (this.child.exitCode !== null || Date.now() > deadline)
        throw new Error(
          `${this.child.exitCode !== null ? 'it ended' : 'timed out'} waiting for ${what}:\n${this.lines.slice(-40).join('\n')}`,
        );
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Ctrl-C: SIGINT to the whole group, as a terminal sends it; SIGKILL after `graceMs`. Resolves with the exit code. */
  async interrupt(graceMs = 20_000): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    const pid = this.child.pid as number;
    process.kill(-pid, 'SIGINT');
    const timer = setTimeout(() => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {}
    }, graceMs);
    const code = await this.exit;
    clearTimeout(timer);
    return code;
  }
}

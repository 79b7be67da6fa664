// Benchmarks that run their server (and baselines) in child processes of their own (auth,
// subscriptions, sub-link): the parent forks a child and waits for its first message; the
// child answers with what the parent needs and stops when told.
import { type ChildProcess, fork } from 'node:child_process';
import { basename } from 'node:path';

/** Forks `file` through tsx (with `env` over ours) and resolves with its first IPC message. */
export function child<T>(
  file: string,
  opts: { args?: string[]; env?: NodeJS.ProcessEnv; execArgv?: string[] } = {},
): Promise<{ proc: ChildProcess; msg: T }> {
  return new Promise((resolve, reject) => {
    const proc = fork(file, opts.args ?? [], {
      execArgv: ['--import', 'tsx', ...(opts.execArgv ?? [])],
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    proc.once('message', (msg) => resolve({ proc, msg: msg as T }));
    proc.once('error', reject);
    proc.once('exit', (code) => reject(new Error(`${basename(file)} exited with ${code}`)));
  });
}

/** Tells a child to stop and waits until it has exited. */
export const stopChild = (p: ChildProcess) =>
  new Promise<void>((resolve) => {
    p.removeAllListeners('exit');
    p.once('exit', () => resolve());
    p.send('stop');
  });

/** The child's side: sends `msg` to the parent; told to stop, runs `stop` and exits. */
export function answerParent(msg: unknown, stop: () => Promise<void>): void {
  process.send?.(msg);
  process.on('message', async (m) => {
    if (m === 'stop') {
      await stop();
      process.exit(0);
    }
  });
}

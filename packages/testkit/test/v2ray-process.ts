import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Just enough of a v2ray runner for this package's own tests (a config file, the process, its
 * "started" line, kill -9). End-to-end tests use the testkit's engine runner instead.
 */

export interface V2rayProcess {
  child: ChildProcess;
  output(): string;
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Runs `v2ray -config <file>` and resolves once it logged that it started; rejects if it exits first. */
export async function runV2ray(config: unknown): Promise<V2rayProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-testkit-v2ray-run-'));
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify(config));
  const child = spawn('v2ray', ['-config', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => rmSync(dir, { recursive: true, force: true }));
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (/V2Ray \S+ started/.test(output)) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then(() => reject(new Error(`v2ray exited before it started:\n${output}`)));
  });
  const kill = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return { child, output: () => output, kill9: () => kill('SIGKILL'), stop: () => kill('SIGTERM') };
}

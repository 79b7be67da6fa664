import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';

/** Runs a program with text on its stdin: nft -f -, tc -batch -, ip -batch - (one process each). */
export type Runner = (bin: string, args: string[], input?: string) => Promise<{ code: number; stdout: string; stderr: string }>;

/**
 * The real runner. `prefix` runs every program through another (the tests shape inside a
 * network namespace: ['ip', 'netns', 'exec', NAME]). Rejects only when the program cannot start.
 */
export function spawnRunner(prefix: string[] = []): Runner {
  return (bin, args, input) =>
    new Promise((resolve, reject) => {
      const argv = [...prefix, bin, ...args];
      const child = spawn(argv[0] as string, argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        stdout += d;
      });
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code: code ?? -1, stdout, stderr });
      });
      child.stdin.on('error', () => {});
      child.stdin.end(input ?? '');
    });
}

/** Null when the process has CAP_NET_ADMIN in its effective set (bit 12 of CapEff), else why not. */
export async function capabilityMissing(): Promise<string | null> {
  const status = await readFile('/proc/self/status', 'utf8').catch(() => '');
  const line = status.split('\n').find((l) => l.startsWith('CapEff:'));
  if (!line) return 'the capabilities of the agent cannot be read (/proc/self/status)';
  try {
    if ((BigInt(`0x${line.slice('CapEff:'.length).trim()}`) & (1n << 12n)) !== 0n) return null;
  } catch {
    return 'the capabilities of the agent cannot be read (/proc/self/status)';
  }
  return 'the agent lacks CAP_NET_ADMIN (needed for tc and nft)';
}

import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { type EngineSettings, engineArgs } from './engine-settings.ts';

const run = promisify(execFile);

/**
 * One-shot runs of the engine binary: its version, and its verdict on a configuration file
 * (`xray run -test -c f` / `v2ray -test -config f`) before that file replaces the running one.
 */
export async function engineVersion(s: EngineSettings): Promise<string> {
  try {
    const { stdout } = await run(s.bin, engineArgs.version(s.flavour), { timeout: 15_000 });
    // "Xray 25.10.15 (Xray, Penetrates Everything.) ..." / "V2Ray 4.34.0 (V2Fly, ...) ..."
    const first = stdout.split('\n')[0] ?? '';
    return /^\S+ (\S+)/.exec(first)?.[1] ?? first.trim();
  } catch {
    return '';
  }
}

/** Exit code 0 and what the engine printed; the output is kept short enough for an ApplyResult. */
export async function engineTest(s: EngineSettings, configFile: string): Promise<{ ok: boolean; output: string }> {
  try {
    await run(s.bin, engineArgs.test(s.flavour, configFile), { timeout: 120_000, maxBuffer: 8 * 1024 * 1024 });
    return { ok: true, output: '' };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    const text = `${e.stdout ?? ''}${e.stderr ?? ''}`.trim() || e.message;
    return { ok: false, output: text.length > 16_384 ? `…${text.slice(-16_384)}` : text };
  }
}

/** A TCP port on 127.0.0.1 nobody listens on now: the engine's API port, chosen by the agent. */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

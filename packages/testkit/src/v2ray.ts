import { execFile, type SpawnSyncOptionsWithStringEncoding, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { peerMissing } from './peers.ts';

/**
 * Debian's `v2ray` as an independent check of the Xray configs we write: it loads a config and
 * answers with its exit code. v4 and v5 spell the test differently (`v2ray -test -config f.json`,
 * `v2ray test -c f.json`); either is found on PATH.
 */
export type V2rayAvailability = { available: true; version: string } | { available: false; reason: string };

const run = promisify(execFile);

interface Detected {
  availability: V2rayAvailability;
  /** The arguments that test the config in `file`. */
  args(file: string): string[];
}

const usable = (versionOutput: string, args: (file: string) => string[]): Detected => ({
  availability: { available: true, version: versionOutput.split('\n')[0] ?? '' },
  args,
});
const unusable = (reason: string): Detected => ({ availability: { available: false, reason }, args: () => [] });

function detect(): Detected {
  const opts: SpawnSyncOptionsWithStringEncoding = { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000 };
  const v4 = spawnSync('v2ray', ['-version'], opts);
  if (v4.error) return unusable(`v2ray not runnable (${v4.error.message}); install it with apt-get install v2ray`);
  if (v4.status === 0 && /^V2Ray 4\./m.test(v4.stdout)) return usable(v4.stdout, (f) => ['-test', '-config', f]);
  const v5 = spawnSync('v2ray', ['version'], opts);
  if (v5.status === 0 && /^V2Ray 5\./m.test(v5.stdout)) return usable(v5.stdout, (f) => ['test', '-c', f]);
  return unusable(`unknown v2ray version: ${(v4.stdout || v4.stderr || v5.stdout || v5.stderr).trim().split('\n')[0]}`);
}

let detected: Detected | undefined;
/** Asked once per process. */
const v2ray = () => {
  if (!detected) {
    detected = detect();
    // With CI=true a missing v2ray fails the suite that asks instead of skipping it.
    if (!detected.availability.available) peerMissing('v2ray', detected.availability.reason);
  }
  return detected;
};

/** Whether a v2ray that can test configs is on PATH (its version line), or why not. */
export function v2rayAvailable(): V2rayAvailability {
  return v2ray().availability;
}

/**
 * Has v2ray load `config` (written as JSON to a file of its own, named after `name`): code 0 is
 * its verdict that the config is valid; output is what it printed. Throws when v2ray is not available.
 */
export async function v2rayTest(config: unknown, name = 'config'): Promise<{ code: number; output: string }> {
  const { availability, args } = v2ray();
  if (!availability.available) throw new Error(availability.reason);
  const dir = await mkdtemp(join(tmpdir(), 'svc-testkit-v2ray-'));
  try {
    const file = join(dir, `${name.replace(/[^A-Za-z0-9-]+/g, '_')}.json`);
    await writeFile(file, JSON.stringify(config, null, 2));
    return await run('v2ray', args(file), { timeout: 30_000 }).then(
      ({ stdout, stderr }) => ({ code: 0, output: `${stdout}${stderr}` }),
      (e: { code?: number | string; stdout?: string; stderr?: string }) => ({
        code: typeof e.code === 'number' ? e.code : -1,
        output: `${e.stdout ?? ''}${e.stderr ?? ''}`,
      }),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

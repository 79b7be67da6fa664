import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEntry } from '../src/model.ts';
import { placeholderServer } from '../src/placeholder.ts';
import { renderXrayJson, xrayClientConfig } from '../src/xray-json.ts';
import { doc, everyCombination } from './fixtures.ts';

/**
 * The Xray client configs of the subset Xray shares with v2ray, loaded by an independent
 * implementation: Debian's `v2ray` (v4: `v2ray -test -config f.json`; v5: `v2ray test -c f.json`)
 * must answer exit 0. Shared: VLESS, VMess, Trojan and classic-AEAD Shadowsocks over tcp and ws,
 * with and without TLS, no Vision flow. REALITY, XHTTP, HTTPUpgrade, gRPC, Vision and
 * Shadowsocks 2022 are Xray-only and pinned by the golden file and xray-json.test.ts instead.
 */
const run = promisify(execFile);

function detectV2ray(): { args: (file: string) => string[]; version: string } | { reason: string } {
  const v4 = spawnSync('v2ray', ['-version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000 });
  if (v4.error) return { reason: `v2ray not runnable (${v4.error.message}); install it with apt-get install v2ray` };
  if (v4.status === 0 && /^V2Ray 4\./m.test(v4.stdout))
    return { args: (f) => ['-test', '-config', f], version: v4.stdout.split('\n')[0] ?? '' };
  const v5 = spawnSync('v2ray', ['version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000 });
  if (v5.status === 0 && /^V2Ray 5\./m.test(v5.stdout)) return { args: (f) => ['test', '-c', f], version: v5.stdout.split('\n')[0] ?? '' };
  return { reason: `unknown v2ray version: ${(v4.stdout || v4.stderr || v5.stdout || v5.stderr).trim().split('\n')[0]}` };
}

const v2ray = detectV2ray();
const unavailable = 'reason' in v2ray ? v2ray.reason : null;
if (unavailable) console.warn(`v2ray config tests skipped: ${unavailable}`);

let dir: string;
beforeAll(async () => {
  if (!unavailable) dir = await mkdtemp(join(tmpdir(), 'sub-formats-v2ray-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function v2rayTest(name: string, config: unknown): Promise<{ code: number; output: string }> {
  if ('reason' in v2ray) throw new Error(v2ray.reason);
  const file = join(dir, `${name.replace(/[^A-Za-z0-9-]+/g, '_')}.json`);
  await writeFile(file, JSON.stringify(config, null, 2));
  try {
    const { stdout, stderr } = await run('v2ray', v2ray.args(file), { timeout: 30_000 });
    return { code: 0, output: `${stdout}${stderr}` };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === 'number' ? err.code : -1, output: `${err.stdout ?? ''}${err.stderr ?? ''}` };
  }
}

/** What v2ray has too: tcp or ws, no REALITY, no Vision flow, no Shadowsocks 2022. */
const isShared = (s: ServerEntry) =>
  (s.stream.network === 'tcp' || s.stream.network === 'ws') &&
  s.stream.security !== 'reality' &&
  !(s.protocol === 'vless' && s.flow) &&
  !(s.protocol === 'shadowsocks' && s.method?.startsWith('2022-'));

const SHARED = everyCombination().filter(isShared);

describe('v2ray loads the Xray client configs of the shared subset', () => {
  it('the shared subset covers every protocol x {tcp, ws} x {none, tls} that v2ray has', () => {
    const combos = new Set(SHARED.map((s) => `${s.protocol}/${s.stream.network}/${s.stream.security}`));
    for (const p of ['vless', 'vmess', 'trojan'])
      for (const n of ['tcp', 'ws']) for (const sec of ['none', 'tls']) expect(combos).toContain(`${p}/${n}/${sec}`);
    expect(combos).toContain('shadowsocks/tcp/none');
  });

  it.skipIf(unavailable).each(SHARED.map((s) => [s.name, s] as const))('%s', async (name, s) => {
    const { code, output } = await v2rayTest(name, xrayClientConfig(s));
    expect(code, `v2ray rejected ${name}:\n${output}`).toBe(0);
  });

  it.skipIf(unavailable)('the placeholder config of a non-active document', async () => {
    const [config] = JSON.parse(renderXrayJson(doc([], 'expired'))) as unknown[];
    const { code, output } = await v2rayTest('placeholder', config);
    expect(code, output).toBe(0);
    expect(config).toEqual(xrayClientConfig(placeholderServer('⛔ Subscription expired')));
  });

  it.skipIf(unavailable)('control: v2ray does reject a broken config (an unknown outbound protocol)', async () => {
    const config = xrayClientConfig(SHARED[0] as ServerEntry) as { outbounds: { protocol: string }[] };
    (config.outbounds[0] as { protocol: string }).protocol = 'no-such-protocol';
    const { code, output } = await v2rayTest('control', config);
    expect(code).not.toBe(0);
    expect(output).toMatch(/no-such-protocol|unknown|failed/i);
  });
});

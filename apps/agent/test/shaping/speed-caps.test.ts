import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnRunner } from '../../src/shaping/shape-runner.ts';
import { Shaper } from '../../src/shaping/shaper.ts';
import { capLimits, removeNetns, sh, shapingSkipReason, slope, vethPair } from './netns.ts';

/**
 * Speed caps in the kernel, measured: a server in one network namespace, clients in another,
 * a veth pair between them (made by the test). The Shaper shapes the server's veth; a capped
 * user's download and upload at 1 Mbit/s measure within ±20% while an uncapped user of the same
 * node, at the same time, runs many times faster. Transfers last 7 s; the rate is the slope of
 * the bytes received from 1.5 s on (least squares over 100 ms samples).
 *
 * The connections are handed to the Shaper as the agent hands them from its live-connection
 * table (email -> client address and port); the clients bind known ports for that.
 */
const TRAFFIC = fileURLToPath(new URL('./traffic.mjs', import.meta.url));
const SRV = 'svcshape-srv';
const CLI = 'svcshape-cli';
const DEV = 'svcsh-s';

const skip = shapingSkipReason();
if (skip) console.warn(`speed-cap tests skipped: ${skip}`);

const inSrv = (...args: string[]) => sh('ip', 'netns', 'exec', SRV, ...args);

/** Runs a client in the client namespace; resolves with its bytes per second from 1.5 s on. */
function transfer(mode: 'down' | 'up', server: string, local: string, port: number, seconds: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('ip', [
      'netns',
      'exec',
      CLI,
      process.execPath,
      TRAFFIC,
      mode,
      server,
      '9000',
      local,
      String(port),
      String(seconds),
    ]);
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`client ${mode} ${port}: ${err}`));
      const samples = (JSON.parse(out) as { samples: Array<[number, number]> }).samples.filter(([t]) => t >= 1500);
      resolve(slope(samples) * 1000);
    });
  });
}

const CAP = 1_000_000;
let server: ReturnType<typeof spawn> | undefined;
let shaper: Shaper;

describe.skipIf(skip !== null)('speed caps in the kernel (network namespaces)', () => {
  beforeAll(async () => {
    vethPair(
      { ns: SRV, dev: DEV, addresses: ['10.87.0.1/24', 'fd87::1/64'] },
      { ns: CLI, dev: 'svcsh-c', addresses: ['10.87.0.2/24', 'fd87::2/64'], congestionControl: 'reno' },
    );
    server = spawn('ip', ['netns', 'exec', SRV, process.execPath, TRAFFIC, 'serve', '::', '9000'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve) => server?.stdout?.once('data', () => resolve()));
    shaper = new Shaper({ devices: [DEV], run: spawnRunner(['ip', 'netns', 'exec', SRV]) });
  }, 30_000);

  afterAll(async () => {
    await shaper?.stop();
    server?.kill();
    removeNetns([SRV, CLI]);
  });

  it('probes the node without touching its device and says it can shape', async () => {
    const before = inSrv('tc', 'qdisc', 'show', 'dev', DEV);
    const status = await shaper.probe();
    expect(status).toEqual({ speedCaps: true, error: '', devices: [DEV, expect.stringMatching(/^svcup\d+$/)] });
    expect(inSrv('tc', 'qdisc', 'show', 'dev', DEV)).toBe(before);
    expect(inSrv('nft', 'list', 'tables')).not.toContain('svc_shape');
  });

  it('a desired state that caps someone sets the roots, the IFB and the table up before any capped connection: its first connection waits only for its own class', async () => {
    shaper.setLimits([capLimits('capped', 0, CAP), capLimits('free', 0, 0)]);
    await shaper.apply(new Map([['free@svc', [{ host: '10.87.0.2', port: 41009 }]]]));
    expect(inSrv('nft', 'list', 'tables')).toContain('svc_shape');
    expect(inSrv('tc', 'qdisc', 'show', 'dev', DEV)).toMatch(/htb 5c00: root/);
    expect(inSrv('ip', '-o', 'link', 'show')).toContain(shaper.status().devices[1] as string);
    // No class yet (nobody capped is connected), and the uncapped user meets no filter.
    expect(inSrv('tc', 'class', 'show', 'dev', DEV)).toBe('');
    expect(inSrv('tc', 'filter', 'show', 'dev', DEV, 'ingress')).not.toMatch(/mirred/);
  });

  it('a 1 Mbit/s download cap measures within ±20% while an uncapped user at the same time runs more than 5x faster', async () => {
    shaper.setLimits([capLimits('capped', 0, CAP), capLimits('free', 0, 0)]);
    await shaper.apply(
      new Map([
        ['capped@svc', [{ host: '10.87.0.2', port: 41001 }]],
        ['free@svc', [{ host: '10.87.0.2', port: 41002 }]],
      ]),
    );
    const [capped, free] = await Promise.all([
      transfer('down', '10.87.0.1', '10.87.0.2', 41001, 7),
      transfer('down', '10.87.0.1', '10.87.0.2', 41002, 7),
    ]);
    console.log(`download: capped ${((capped * 8) / 1e6).toFixed(3)} Mbit/s, uncapped ${((free * 8) / 1e6).toFixed(1)} Mbit/s`);
    expect(capped * 8).toBeGreaterThan(CAP * 0.8);
    expect(capped * 8).toBeLessThan(CAP * 1.2);
    expect(free).toBeGreaterThan(5 * capped);
  }, 30_000);

  it('a 1 Mbit/s upload cap (IPv6, through the IFB) measures within ±20% while an uncapped user runs more than 5x faster', async () => {
    shaper.setLimits([capLimits('capped', CAP, CAP), capLimits('free', 0, 0)]);
    await shaper.apply(
      new Map([
        ['capped@svc', [{ host: 'fd87::2', port: 41003 }]],
        ['free@svc', [{ host: 'fd87::2', port: 41004 }]],
      ]),
    );
    const [capped, free] = await Promise.all([
      transfer('up', 'fd87::1', 'fd87::2', 41003, 7),
      transfer('up', 'fd87::1', 'fd87::2', 41004, 7),
    ]);
    console.log(`upload: capped ${((capped * 8) / 1e6).toFixed(3)} Mbit/s, uncapped ${((free * 8) / 1e6).toFixed(1)} Mbit/s`);
    expect(capped * 8).toBeGreaterThan(CAP * 0.8);
    expect(capped * 8).toBeLessThan(CAP * 1.2);
    expect(free).toBeGreaterThan(5 * capped);
    // Only the capped connection is redirected: one u32 filter on the ingress, one on the IFB.
    expect(inSrv('tc', 'filter', 'show', 'dev', DEV, 'ingress').match(/mirred/g)).toHaveLength(1);
  }, 30_000);

  it('a user whose cap is lifted is no longer shaped; a desired state capping nobody removes everything installed, and so does stop', async () => {
    const ifb = shaper.status().devices[1] as string;
    shaper.setLimits([capLimits('capped', 0, 0)]);
    await shaper.apply(new Map([['capped@svc', [{ host: '10.87.0.2', port: 41005 }]]]));
    expect(inSrv('tc', 'class', 'show', 'dev', DEV)).toBe('');
    expect(inSrv('nft', 'list', 'tables')).not.toContain('svc_shape');
    expect(inSrv('tc', 'qdisc', 'show', 'dev', DEV)).not.toMatch(/htb|ingress/);
    expect(inSrv('ip', '-o', 'link', 'show')).not.toContain(ifb);
    const rate = await transfer('down', '10.87.0.1', '10.87.0.2', 41005, 3);
    expect(rate * 8).toBeGreaterThan(10 * CAP);
    // Capped again, then stopped: stop removes what the cap set up.
    shaper.setLimits([capLimits('capped', 0, CAP)]);
    await shaper.apply(new Map([['capped@svc', [{ host: '10.87.0.2', port: 41005 }]]]));
    expect(inSrv('tc', 'qdisc', 'show', 'dev', DEV)).toMatch(/htb 5c00: root/);
    await shaper.stop();
    expect(inSrv('nft', 'list', 'tables')).not.toContain('svc_shape');
    expect(inSrv('tc', 'qdisc', 'show', 'dev', DEV)).not.toMatch(/htb|ingress/);
    expect(inSrv('ip', '-o', 'link', 'show')).not.toContain(ifb);
  }, 30_000);
});

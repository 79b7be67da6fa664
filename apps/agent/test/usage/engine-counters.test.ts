// The journal's design rests on two facts about the engine's StatsService, checked here on a real
// v2ray (Debian's v4, API package `v2ray.core.`; queried with its `v2ctl api`): a user's traffic
// counters read without reset are cumulative and stay put between reads, and a new engine
// process starts them from 0. Real traffic goes through a vmess inbound whose user is
// `<subscription_id>@svc`, and the journal turns the readings into exactly the bytes sent.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { type AddressInfo, connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { peerMissing } from '@svc/testkit/peers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CounterReading, type JournalRecord, UsageJournal } from '../../src/usage/index.ts';

const hasV2ctl = spawnSync('v2ctl', ['version'], { stdio: 'ignore' }).error === undefined;
if (!hasV2ctl) peerMissing('v2ctl', 'v2ray/v2ctl (v4) not on PATH; apt-get install v2ray');
if (!hasV2ctl) console.warn('engine-counters.test.ts skipped: v2ray/v2ctl (v4) not on PATH; install it with apt-get install v2ray');

const UUID = 'b831381d-6324-4d53-ad4f-8cda48b30811';

async function freePort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const { port } = s.address() as AddressInfo;
  s.close();
  return port;
}

let dir: string;
let echo: Server;
let ports: { api: number; entry: number; vmess: number; echo: number };
let engine: ChildProcess | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-usage-engine-'));
  echo = createServer((s) => s.pipe(s)).listen(0, '127.0.0.1');
  await once(echo, 'listening');
  ports = { api: await freePort(), entry: await freePort(), vmess: await freePort(), echo: (echo.address() as AddressInfo).port };
  // entry (dokodemo) -> vmess client -> vmess inbound of user sub_test@svc -> freedom -> echo server.
  const config = {
    log: { loglevel: 'warning' },
    stats: {},
    api: { tag: 'api', services: ['StatsService'] },
    policy: { levels: { '0': { statsUserUplink: true, statsUserDownlink: true } } },
    inbounds: [
      { tag: 'api', listen: '127.0.0.1', port: ports.api, protocol: 'dokodemo-door', settings: { address: '127.0.0.1' } },
      {
        tag: 'entry',
        listen: '127.0.0.1',
        port: ports.entry,
        protocol: 'dokodemo-door',
        settings: { address: '127.0.0.1', port: ports.echo, network: 'tcp' },
      },
      {
        tag: 'vmess-in',
        listen: '127.0.0.1',
        port: ports.vmess,
        protocol: 'vmess',
        settings: { clients: [{ id: UUID, alterId: 0, email: 'sub_test@svc', level: 0 }] },
      },
    ],
    outbounds: [
      { tag: 'direct', protocol: 'freedom' },
      {
        tag: 'vmess-out',
        protocol: 'vmess',
        settings: { vnext: [{ address: '127.0.0.1', port: ports.vmess, users: [{ id: UUID, alterId: 0 }] }] },
      },
    ],
    routing: {
      rules: [
        { type: 'field', inboundTag: ['api'], outboundTag: 'api' },
        { type: 'field', inboundTag: ['entry'], outboundTag: 'vmess-out' },
      ],
    },
  };
  await writeFile(join(dir, 'engine.json'), JSON.stringify(config));
});

afterAll(async () => {
  engine?.kill('SIGKILL');
  echo?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Starts v2ray; resolves with its instance string once its API answers. */
async function startEngine(): Promise<string> {
  engine = spawn('v2ray', ['-config', join(dir, 'engine.json')], { stdio: 'ignore' });
  const instance = `${engine.pid}:${Date.now()}`;
  for (let i = 0; i < 100; i++) {
    if (
      spawnSync('v2ctl', ['api', `--server=127.0.0.1:${ports.api}`, 'StatsService.QueryStats', 'pattern: "" reset: false']).status === 0
    ) {
      return instance;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('v2ray API did not answer');
}

async function killEngine(): Promise<void> {
  const e = engine;
  if (!e) return;
  const exited = once(e, 'exit');
  e.kill('SIGKILL');
  await exited;
}

/** Sends `bytes` through the engine and waits for them to come back. */
async function traffic(bytes: number): Promise<void> {
  const c = connect(ports.entry, '127.0.0.1');
  await once(c, 'connect');
  c.write(Buffer.alloc(bytes, 7));
  let got = 0;
  for await (const chunk of c) {
    got += (chunk as Buffer).length;
    if (got >= bytes) break;
  }
  c.destroy();
}

/** QueryStats without reset, as the agent reads: every `user>>>EMAIL>>>traffic>>>uplink|downlink`. */
function readCounters(instance: string): CounterReading {
  const out = spawnSync('v2ctl', ['api', `--server=127.0.0.1:${ports.api}`, 'StatsService.QueryStats', 'pattern: "user>>>" reset: false'], {
    encoding: 'utf8',
  });
  const byEmail = new Map<string, { email: string; uplink: bigint; downlink: bigint }>();
  for (const m of out.stdout.matchAll(/name: "user>>>(.+?)>>>traffic>>>(uplink|downlink)"\s+value: (\d+)/g)) {
    const [, email = '', dir, value = '0'] = m;
    const c = byEmail.get(email) ?? { email, uplink: 0n, downlink: 0n };
    if (dir === 'uplink') c.uplink = BigInt(value);
    else c.downlink = BigInt(value);
    byEmail.set(email, c);
  }
  return { instance, counters: [...byEmail.values()] };
}

const sum = (records: JournalRecord[]) =>
  records
    .flatMap((r) => r.entries)
    .reduce((t, e) => [t[0] + e.uplink, t[1] + e.downlink] as [bigint, bigint], [0n, 0n] as [bigint, bigint]);

describe.skipIf(!hasV2ctl)('usage journal on real v2ray counters', () => {
  it('counters read without reset are cumulative and stable, a new engine process restarts them at 0, and the journal reports exactly the bytes sent', async () => {
    const journal = await UsageJournal.open(join(dir, 'state'));
    const first = await startEngine();
    await traffic(100_000);
    expect(sum(await journal.collect(readCounters(first)))).toEqual([100_000n, 100_000n]);
    // Read again, no traffic in between: the counters did not move, so nothing is reported.
    expect(await journal.collect(readCounters(first))).toEqual([]);
    await traffic(30_000);
    expect(sum(await journal.collect(readCounters(first)))).toEqual([30_000n, 30_000n]);

    await killEngine();
    const second = await startEngine();
    expect(readCounters(second).counters).toEqual([]); // counters exist from a user's first traffic, at 0
    await traffic(5_000);
    const afterRestart = readCounters(second);
    expect(afterRestart.counters).toEqual([{ email: 'sub_test@svc', uplink: 5_000n, downlink: 5_000n }]);
    expect(sum(await journal.collect(afterRestart))).toEqual([5_000n, 5_000n]);
    expect(journal.pending().map((r) => r.entries[0]?.subscriptionId)).toEqual(['sub_test', 'sub_test', 'sub_test']);
    await journal.close();
    await killEngine();
  });
});

// `pnpm bench:agent-apply`: what applying a desired state costs the node agent on a node with
// 100,000 users (BENCH_USERS) in each of its inbounds (VLESS and Trojan over TCP, BENCH_PROTOCOLS),
// through the real Applier (apps/agent/src/apply) and the real engine (v2ray 4.34 here), in a
// temporary state directory. Each of BENCH_RUNS runs, on a fresh state directory:
// - from nothing (no engine running): render, write, `-test`, start until the API port answers;
// - a restart (an outbound rule changed): the same plus stopping the running engine;
// - the same state again (a reconnect): the comparison and the record of the revision;
// - one new subscription (one user joining every inbound): the hot path, planChange + one
//   HandlerService call per inbound + the configuration file rewritten + the revision recorded.
// The steps are then timed alone with the agent's own functions, beside baselines measured in the
// same run: JSON.stringify without indentation, a plain writeFile, a bare `v2ray -test`, a bare
// start of the engine polled every 10 ms. Last, v2ray 4's load of a VMess inbound of the same
// size, alone (BENCH_VMESS=0 skips it): see the reading in bench/BENCHMARKS.md.
// Appends to bench/BENCHMARKS.md.
import { execFile, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DesiredState, type NodeConfig } from '@svc/proto';
import { renderXrayConfig } from '@svc/xray-config';
import { saveApplied } from '../../apps/agent/src/apply/applied-state.ts';
import { planChange } from '../../apps/agent/src/apply/change-plan.ts';
import { engineTest, freeLoopbackPort } from '../../apps/agent/src/engine/engine-cli.ts';
import type { EngineSettings } from '../../apps/agent/src/engine/engine-settings.ts';
import { writeFileAtomic } from '../../apps/agent/src/state-files.ts';
import { env, loadNow, log, machine, main, mib, n, publish, quietMachine, revision, sleep, tempDir, track } from '../common/run.ts';
import { agentRig, benchEngine, median, ms, procMemory, timed } from './agent-rig.ts';
import { desired, nodeConfig, tagOf, type UserProtocol, userOf, withUsers } from './node-config.ts';

const USERS = env('BENCH_USERS', 100_000);
const RUNS = env('BENCH_RUNS', 3);
const PROTOCOLS = (process.env.BENCH_PROTOCOLS ?? 'vless,trojan').split(',').filter(Boolean) as UserProtocol[];
const VMESS_PROBE = process.env.BENCH_VMESS !== '0';
const run = promisify(execFile);

/** `apply()` of the Applier, timed, with the engine's own start/stop durations of that apply. */
interface Applied {
  total: number;
  start: number;
  stop: number;
}

interface Run {
  cold: Applied;
  restart: Applied;
  unchanged: number;
  hot: number;
  engineRss: number;
  engineHwm: number;
}

/** The configuration with one more user (subscription number USERS) in every inbound. */
function withNewSubscription(config: NodeConfig): NodeConfig {
  let next = config;
  for (const inbound of config.xray?.inbounds ?? []) {
    const p = PROTOCOLS.find((q) => tagOf(q) === inbound.tag) as UserProtocol;
    next = withUsers(next, inbound.tag, [...inbound.users, userOf(p, USERS)]);
  }
  return next;
}

async function oneRun(settings: EngineSettings): Promise<Run> {
  const ports = await Promise.all(PROTOCOLS.map(() => freeLoopbackPort()));
  const shape = { protocols: PROTOCOLS, ports, users: USERS };
  const first = nodeConfig(shape);
  const second = nodeConfig(shape, { routeBittorrent: true });
  const third = withNewSubscription(second);
  const rig = await agentRig(settings);
  const { applier, engine } = rig;
  const apply = async (state: DesiredState, expected: string): Promise<Applied> => {
    const [starts, stops] = [engine.starts.length, engine.stops.length];
    const t = performance.now();
    const outcome = await applier.apply(state);
    const total = performance.now() - t;
    if (!outcome.success || outcome.how !== expected)
      throw new Error(`revision ${state.revision}: ${outcome.how} (expected ${expected}) ${outcome.error}`);
    return {
      total,
      start: engine.starts.slice(starts).reduce((a, b) => a + b, 0),
      stop: engine.stops.slice(stops).reduce((a, b) => a + b, 0),
    };
  };
  const cold = await apply(desired(1, first), 'restart');
  const restart = await apply(desired(2, second), 'restart');
  const unchanged = (await apply(desired(3, second), 'unchanged')).total;
  const hot = (await apply(desired(4, third), 'hot')).total;
  const pid = engine.record?.pid ?? 0;
  const [engineRss, engineHwm] = [await procMemory(pid, 'VmRSS'), await procMemory(pid, 'VmHWM')];
  await rig.close();
  return { cold, restart, unchanged, hot, engineRss, engineHwm };
}

/** Whether 127.0.0.1:port accepts a TCP connection now. */
function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** The engine started without the agent: spawn, poll the API port every 10 ms, then stopped. */
async function bareStart(settings: EngineSettings, file: string, apiPort: number): Promise<number> {
  const t = performance.now();
  const child = track(spawn(settings.bin, settings.flavour === 'xray' ? ['run', '-c', file] : ['-config', file], { stdio: 'ignore' }));
  const exited = new Promise((r) => child.once('exit', r));
  while (!(await portOpen(apiPort))) {
    if (child.exitCode !== null) throw new Error(`${settings.bin} exited at start`);
    await sleep(10);
  }
  const took = performance.now() - t;
  child.kill('SIGTERM');
  await exited;
  return took;
}

interface Steps {
  render: number[];
  stringifyPretty: number[];
  stringifyCompact: number[];
  bytes: number;
  write: number[];
  plainWrite: number[];
  test: number[];
  bareTest: number[];
  bareStart: number[];
  planSame: number[];
  planOneUser: number[];
  record: number[];
  encode: number[];
}

/** The Applier's steps one at a time, with the agent's own functions, and their baselines. */
async function steps(settings: EngineSettings): Promise<Steps> {
  const dir = tempDir('svc-bench-agent-steps-');
  const ports = await Promise.all(PROTOCOLS.map(() => freeLoopbackPort()));
  const apiPort = await freeLoopbackPort();
  const config = nodeConfig({ protocols: PROTOCOLS, ports, users: USERS }, { routeBittorrent: true });
  const plusOne = withNewSubscription(config);
  const noCertificates = (id: string): never => {
    throw new Error(`no certificate ${id}`);
  };
  let json = renderXrayConfig(config, { certificatePaths: noCertificates, apiPort });
  let text = '';
  const s: Steps = {
    render: await timed(RUNS, () => {
      json = renderXrayConfig(config, { certificatePaths: noCertificates, apiPort });
    }),
    stringifyPretty: await timed(RUNS, () => {
      text = `${JSON.stringify(json, null, 2)}\n`;
    }),
    stringifyCompact: await timed(RUNS, () => JSON.stringify(json)),
    bytes: Buffer.byteLength(text),
    write: [],
    plainWrite: [],
    test: [],
    bareTest: [],
    bareStart: [],
    planSame: await timed(RUNS, () => planChange(config, config)),
    planOneUser: await timed(RUNS, () => planChange(config, plusOne)),
    record: await timed(RUNS, () => saveApplied(dir, desired(2, config))),
    encode: await timed(RUNS, () => DesiredState.encode(desired(2, config)).finish()),
  };
  const file = join(dir, 'config.json');
  s.write = await timed(RUNS, () => writeFileAtomic(file, text));
  s.plainWrite = await timed(RUNS, () => writeFile(join(dir, 'plain.json'), text));
  for (let i = 0; i < RUNS; i++) {
    let t = performance.now();
    const verdict = await engineTest(settings, file);
    s.test.push(performance.now() - t);
    if (!verdict.ok) throw new Error(`the engine refused the configuration: ${verdict.output}`);
    t = performance.now();
    await run(settings.bin, settings.flavour === 'xray' ? ['run', '-test', '-c', file] : ['-test', '-config', file], {
      maxBuffer: 8 * 2 ** 20,
    });
    s.bareTest.push(performance.now() - t);
    s.bareStart.push(await bareStart(settings, file, apiPort));
  }
  return s;
}

/** v2ray's `-test` of one VMess inbound of USERS users: seconds and the process's peak RSS. */
async function vmessProbe(settings: EngineSettings): Promise<{ seconds: number; peak: number; perUserAt10k: number }> {
  const dir = tempDir('svc-bench-agent-vmess-');
  const measure = async (users: number) => {
    const config = nodeConfig({ protocols: ['vmess'], ports: [await freeLoopbackPort()], users });
    const file = join(dir, `vmess-${users}.json`);
    await writeFile(
      file,
      JSON.stringify(renderXrayConfig(config, { certificatePaths: () => ({ certFile: '', keyFile: '' }), apiPort: 1 })),
    );
    const t = performance.now();
    const child = track(
      spawn(settings.bin, settings.flavour === 'xray' ? ['run', '-test', '-c', file] : ['-test', '-config', file], { stdio: 'ignore' }),
    );
    let peak = 0;
    let code: number | null = null;
    child.once('exit', (c) => {
      code = c;
    });
    while (code === null && child.exitCode === null) {
      peak = Math.max(peak, await procMemory(child.pid ?? 0, 'VmHWM'));
      await sleep(100);
    }
    if ((code ?? child.exitCode) !== 0) throw new Error(`${settings.bin} -test refused the VMess configuration`);
    return { seconds: (performance.now() - t) / 1000, peak };
  };
  const small = await measure(10_000);
  const big = await measure(USERS);
  return { ...big, perUserAt10k: (small.seconds * 1000) / 10_000 };
}

await main(async () => {
  const settings = benchEngine();
  const version = (await run(settings.bin, settings.flavour === 'xray' ? ['version'] : ['-version'])).stdout.split('\n')[0] ?? '';
  const before = await quietMachine();
  const runs: Run[] = [];
  for (let i = 1; i <= RUNS; i++) {
    log(`run ${i}/${RUNS}: apply ${n(USERS)} users × ${PROTOCOLS.join(' + ')} through the Applier`);
    runs.push(await oneRun(settings));
  }
  log('the steps alone and their baselines');
  const s = await steps(settings);
  let vmess: Awaited<ReturnType<typeof vmessProbe>> | null = null;
  if (VMESS_PROBE) {
    log(`v2ray -test of one VMess inbound of ${n(USERS)} users`);
    vmess = await vmessProbe(settings);
  }
  const m = (f: (r: Run) => number) => ms(median(runs.map(f)));
  const inbounds = `${PROTOCOLS.length} inbounds (${PROTOCOLS.map((p) => `${p.toUpperCase()} TCP`).join(', ')})`;
  publish([
    `### ${new Date().toISOString().slice(0, 10)} — agent apply, ${n(USERS)} users in each of ${inbounds}`,
    '',
    `Machine: ${machine()}. Engine: ${settings.bin} (${version}). Commit ${revision()}. Load average (1/5/15 min) before: ${before}; after: ${loadNow()}. Medians of ${RUNS} runs, each on a fresh temporary state directory on the machine's disk; configuration file ${mib(s.bytes)} MiB.`,
    '',
    '| Applier.apply() | total ms | of which: engine stop | engine start until its API answers |',
    '|---|---|---|---|',
    `| from nothing (render, write, -test, start) | ${m((r) => r.cold.total)} | — | ${m((r) => r.cold.start)} |`,
    `| restart (a routing rule changed: render, write, -test, stop, start) | ${m((r) => r.restart.total)} | ${m((r) => r.restart.stop)} | ${m((r) => r.restart.start)} |`,
    `| the same state again (unchanged) | ${m((r) => r.unchanged)} | — | — |`,
    `| one new subscription (hot: one user added to each inbound) | ${m((r) => r.hot)} | — | — |`,
    '',
    "| step, alone (the agent's function) | ms | baseline in the same run | ms |",
    '|---|---|---|---|',
    `| renderXrayConfig | ${ms(median(s.render))} | — | |`,
    `| JSON.stringify(json, null, 2) (as the Applier writes it) | ${ms(median(s.stringifyPretty))} | JSON.stringify(json) | ${ms(median(s.stringifyCompact))} |`,
    `| writeFileAtomic (temp file, fsync, rename, fsync of the directory) | ${ms(median(s.write))} | writeFile, no fsync | ${ms(median(s.plainWrite))} |`,
    `| engineTest (\`-test\`) | ${ms(median(s.test))} | bare \`${settings.bin} -test\` | ${ms(median(s.bareTest))} |`,
    `| engine start until the API answers (in the restart above; port polled every 100 ms) | ${m((r) => r.restart.start)} | bare start, port polled every 10 ms | ${ms(median(s.bareStart))} |`,
    `| planChange, same state | ${ms(median(s.planSame))} | — | |`,
    `| planChange, one new subscription | ${ms(median(s.planOneUser))} | — | |`,
    `| saveApplied (record of the revision: encode + writeFileAtomic) | ${ms(median(s.record))} | DesiredState.encode alone | ${ms(median(s.encode))} |`,
    '',
    `Engine memory after the runs' last apply (median): RSS ${mib(median(runs.map((r) => r.engineRss)))} MiB, peak ${mib(median(runs.map((r) => r.engineHwm)))} MiB.`,
    ...(vmess
      ? [
          '',
          `${settings.bin} -test of one VMess TCP inbound of ${n(USERS)} users, alone: ${vmess.seconds.toFixed(1)} s, peak RSS ${mib(vmess.peak)} MiB (at 10,000 users: ${vmess.perUserAt10k.toFixed(3)} ms per user).`,
        ]
      : []),
    '',
  ]);
});

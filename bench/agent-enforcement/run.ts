// `pnpm bench:enforcement`: the agent's enforcement passes at 10,000 users (BENCH_USERS), CPU per
// pass: device limits (issue 36.1), entitlements (36.3: entitlement-pass.ts) and speed caps
// (36.2: speed-cap-pass.ts), each with a baseline measured in the same run.
// - A real socket table: BENCH_SOCKETS (15,000) established loopback TCP connections to one
//   port standing for the engine's inbound (this process holds the server ends, a child process
//   the clients, each from its own source address 127.1.x.y), and the access line of each
//   (user i % BENCH_USERS), fed as the engine's stdout would be: access-log lines per second.
// - The device pass as the agent runs it (DeviceEnforcer.pass: one `ss -tnH state established
//   ( sport = :P )`, the parse, the join with the access log, the tracker, the DeviceReport):
//   BENCH_PASSES passes, CPU per pass of this process and of ss -i (the children's CPU from
//   /proc/self/stat), wall time; 1,000 users have device_limit 1 and two devices, so 1,000
//   connections are queued to end on every pass (the end itself stubbed, timed apart below).
// - The same join and tracker on 30,000 synthetic sockets (3 per user), without ss.
// - ss -K of the 1,000 refused connections by exact tuple (64 a call): wall time.
// - Baseline of the device pass: the socket table read alone (one ss -tniH and its parse, what
//   any pass over live connections pays), and ss without -i (the socket details the device
//   rule reads for how long a client has been silent).
// Prints the results (BENCH_NO_APPEND is implied: the coordinator merges them into BENCHMARKS.md
// unless BENCH_APPEND=1).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Socket as NetSocket } from 'node:net';
import { pino } from 'pino';
import { ConnectionBook } from '../../apps/agent/src/connections/access-log.ts';
import { LiveConnections } from '../../apps/agent/src/connections/live-connections.ts';
import { destroyExact, establishedSockets, type Socket } from '../../apps/agent/src/connections/socket-table.ts';
import { DeviceEnforcer } from '../../apps/agent/src/devices/device-enforcer.ts';
import { env, loadNow, log, machine, main, n, publish, quietMachine, revision } from '../common/run.ts';
import { entitlementPass } from './entitlement-pass.ts';
import { speedCapPass } from './speed-cap-pass.ts';

const USERS = env('BENCH_USERS', 10_000);
const SOCKETS = env('BENCH_SOCKETS', 15_000);
const PASSES = env('BENCH_PASSES', 20);
const LIMITED = env('BENCH_LIMITED', 1000);
const CAPPED = env('BENCH_CAPPED', 1000);
if (!process.env.BENCH_APPEND) process.env.BENCH_NO_APPEND = '1';

const ms = (x: number) => x.toFixed(x < 10 ? 2 : 1);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const email = (u: number) => `sub_${u}@svc`;
const line = (host: string, port: number, u: number) =>
  `2026/11/29 19:00:00.000000 from tcp:${host}:${port} accepted tcp:example.com:443 [vless-tcp -> direct] email: ${email(u)}`;

/** Children's CPU (ss) so far, ms: cutime + cstime of /proc/self/stat, in clock ticks of 10 ms. */
function childrenCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

const CLIENTS = `
const net = require('node:net');
const [port, count] = process.argv.slice(1).map(Number);
const held = [];
let open = 0, next = 0;
const src = (i) => '127.1.' + ((i >> 8) & 255) + '.' + (i & 255);
function one() {
  if (next >= count) return;
  const i = next++;
  const s = net.connect({ port, host: '127.0.0.1', localAddress: src(i) }, () => { held.push(s); if (++open === count) process.send('ready'); else one(); });
  s.on('error', (e) => { process.send('error ' + e.message); });
}
for (let k = 0; k < 64; k++) one();
process.on('message', () => process.exit(0));
`;

await main(async () => {
  const before = await quietMachine();
  const server = createServer();
  const held: NetSocket[] = [];
  const book = new ConnectionBook();
  let port = 0;
  const live = new LiveConnections({ ports: () => [port] });
  const lines: string[] = [];
  server.on('connection', (s) => {
    held.push(s);
    s.on('error', () => {});
    const i = held.length - 1;
    lines.push(line(s.remoteAddress as string, s.remotePort as number, i % USERS));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as { port: number }).port;
  log(`${n(SOCKETS)} connections from ${n(SOCKETS)} source addresses`);
  const child = spawn(process.execPath, ['-e', CLIENTS, String(port), String(SOCKETS)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise<void>((resolve, reject) => {
    child.on('message', (m) => (m === 'ready' ? resolve() : reject(new Error(String(m)))));
    child.on('exit', (code) => reject(new Error(`clients exited ${code}`)));
  });
  while (held.length < SOCKETS) await new Promise((r) => setTimeout(r, 20));

  // Access lines as the engine writes them, through the book and the live table (as agent.ts wires them).
  const t0 = performance.now();
  for (const l of lines) live.seen(book.see(l));
  const lineMs = performance.now() - t0;

  let queued = 0;
  const enforcer = new DeviceEnforcer({
    live,
    ports: () => [port],
    send: () => true,
    log: pino({ level: 'silent' }),
    graceMs: 0,
    // The bench's connections carry no traffic: count them as present however long they are silent.
    lingerMs: 3_600_000,
    destroy: async (s) => {
      queued += s.length;
      return s.length;
    },
    missing: async () => null,
  });
  // Users 0..LIMITED-1 have two devices (sockets u and u + USERS) and device_limit 1.
  enforcer.setLimits(
    Array.from({ length: LIMITED }, (_, u) => ({
      subscriptionId: `sub_${u}`,
      deviceLimit: 1,
      uploadBps: 0n,
      downloadBps: 0n,
      notAfterMs: 0n,
      sliceId: 0n,
      sliceBytes: 0n,
    })),
  );
  await enforcer.start();
  enforcer.stop();
  const cpu: number[] = [];
  const ssCpu: number[] = [];
  const wall: number[] = [];
  for (let p = 0; p < PASSES + 2; p++) {
    const c0 = process.cpuUsage();
    const k0 = childrenCpuMs();
    const w0 = performance.now();
    await enforcer.pass();
    const w = performance.now() - w0;
    const c = process.cpuUsage(c0);
    if (p < 2) continue; // warm-up (and the first pass, which sees every device first)
    wall.push(w);
    cpu.push((c.user + c.system) / 1000);
    ssCpu.push(childrenCpuMs() - k0);
  }
  const snapshot = live.snapshot;
  const perPassQueued = queued / (PASSES + 2);

  // Baseline: the socket table alone (ss -tniH and the parse), and ss without -i.
  const tableCpu: number[] = [];
  const tableSsCpu: number[] = [];
  const plainSsCpu: number[] = [];
  for (let p = 0; p < PASSES; p++) {
    const c0 = process.cpuUsage();
    const k0 = childrenCpuMs();
    await establishedSockets([port]);
    const c = process.cpuUsage(c0);
    tableCpu.push((c.user + c.system) / 1000);
    tableSsCpu.push(childrenCpuMs() - k0);
    const k1 = childrenCpuMs();
    await new Promise<void>((resolve, reject) => {
      const ss = spawn('ss', ['-tnH', 'state', 'established', '(', 'sport', '=', `:${port}`, ')'], {
        stdio: ['ignore', 'ignore', 'ignore'],
      });
      ss.on('exit', () => resolve());
      ss.on('error', reject);
    });
    plainSsCpu.push(childrenCpuMs() - k1);
  }

  // The same join and tracker on 30,000 synthetic sockets, 3 per user, without ss.
  const synthLive = new LiveConnections({ ports: () => [443] });
  const synthSockets: Socket[] = [];
  for (let i = 0; i < USERS * 3; i++) {
    const host = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    synthSockets.push({ host, port: 40_000 + (i % 20_000), localPort: 443 });
    synthLive.seen(book.see(line(host, 40_000 + (i % 20_000), i % USERS)));
  }
  const synth = new DeviceEnforcer({
    live: synthLive,
    ports: () => [443],
    send: () => true,
    log: pino({ level: 'silent' }),
    destroy: async (s) => s.length,
    missing: async () => null,
  });
  synth.setLimits(
    Array.from({ length: USERS }, (_, u) => ({
      subscriptionId: `sub_${u}`,
      deviceLimit: 2,
      uploadBps: 0n,
      downloadBps: 0n,
      notAfterMs: 0n,
      sliceId: 0n,
      sliceBytes: 0n,
    })),
  );
  const synthCpu: number[] = [];
  for (let p = 0; p < PASSES + 2; p++) {
    const c0 = process.cpuUsage();
    synth.judge(synthLive.join(synthSockets));
    const c = process.cpuUsage(c0);
    if (p >= 2) synthCpu.push((c.user + c.system) / 1000);
  }

  // ss -K of one connection of each limited user (its second device), by exact tuple. (Which
  // source address a user got depends on the order the server accepted the connections in.)
  const refused: Socket[] = [];
  for (let u = 0; u < LIMITED; u++) {
    const second = snapshot?.byUser.get(email(u))?.[1];
    if (second) refused.push(second);
  }
  const k0 = performance.now();
  const ended = await destroyExact(refused);
  const killMs = performance.now() - k0;

  child.send('bye');
  for (const s of held) s.destroy();
  server.close();

  log(`entitlement pass, ${n(USERS)} users`);
  const ent = await entitlementPass(USERS, PASSES);
  log(`speed-cap pass, ${n(USERS)} users, ${n(CAPPED)} capped`);
  const caps = await speedCapPass(USERS, CAPPED);
  const kernel =
    'skipped' in caps.kernel
      ? [`| … in the kernel (a veth in a namespace of the bench's own) | skipped: ${caps.kernel.skipped} |`]
      : [
          `| … in the kernel (ip, tc and nft for real, a veth in a namespace of the bench's own): first pass / steady / churn, wall time | ${ms(caps.kernel.firstMs)} / ${ms(caps.kernel.steadyMs)} / ${ms(caps.kernel.churnMs)} ms (${n(caps.kernel.classes)} classes installed) |`,
          `| … stop (everything removed) | ${ms(caps.kernel.stopMs)} ms |`,
        ];
  publish([
    `### ${new Date().toISOString().slice(0, 10)} — agent enforcement passes (device limits, entitlements, speed caps), ${n(USERS)} users`,
    '',
    `Machine: ${machine()}. Commit ${revision()}. Load average (1/5/15 min) before: ${before}; after: ${loadNow()}. ${PASSES} passes after 2 of warm-up.`,
    '',
    '| what | result |',
    '|---|---|',
    `| access lines into the book and the live table (ConnectionBook.see + LiveConnections.seen), ${n(SOCKETS)} lines | ${ms(lineMs)} ms (${n((SOCKETS / lineMs) * 1000)} lines/s) |`,
    `| device pass, real socket table of ${n(SOCKETS)} established connections (${n(snapshot?.byUser.size ?? 0)} users live, ${n(LIMITED)} over their limit): CPU of the agent per pass, median | ${ms(median(cpu))} ms |`,
    `| … CPU of ss per pass (children's CPU, 10 ms ticks), median | ${ms(median(ssCpu))} ms |`,
    `| … wall time per pass, median / max | ${ms(median(wall))} / ${ms(Math.max(...wall))} ms |`,
    `| … connections queued to end per pass | ${n(perPassQueued)} |`,
    `| join + tracker alone, ${n(USERS * 3)} synthetic sockets (3 devices per user, every user device_limit 2): CPU per pass, median | ${ms(median(synthCpu))} ms |`,
    `| ss -K of ${n(refused.length)} connections by exact tuple (64 a call) | ${ms(killMs)} ms, ${n(ended)} ended |`,
    `| baseline: the socket table alone (ss -tniH + parse): CPU of the agent / of ss per read, median | ${ms(median(tableCpu))} / ${ms(median(tableSsCpu))} ms |`,
    `| baseline: ss -tnH without the socket details (-i): CPU of ss per read, median | ${ms(median(plainSsCpu))} ms |`,
    `| entitlement pass, ${n(USERS)} users each with a not-after and a slice (the engine's counters handed in): full pass after new limits, median | ${ms(ent.fullMs)} ms |`,
    `| … steady pass, 1% of the users counted bytes since the last, median | ${ms(ent.steadyOnePctMs)} ms |`,
    `| … steady pass, every user counted bytes, median | ${ms(ent.steadyAllMs)} ms |`,
    `| baseline: the rule alone (cutReason) over every user, median | ${ms(ent.ruleAloneMs)} ms |`,
    `| speed-cap pass, ${n(USERS)} users with 2 connections each, ${n(CAPPED)} capped (the agent's CPU, commands taken without a kernel): first pass / steady / churn (10% of the capped connections new) | ${ms(caps.firstMs)} / ${ms(caps.steadyMs)} / ${ms(caps.churnMs)} ms (${n(caps.tcLines)} tc lines, ${n(caps.nftLines)} nft lines in all) |`,
    `| baseline: a fresh Shaper's first pass for the churned connections (rebuilding everything) | ${ms(caps.rebuildMs)} ms |`,
    ...kernel,
  ]);
});

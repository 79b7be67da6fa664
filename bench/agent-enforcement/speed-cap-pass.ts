// The speed-cap pass of `pnpm bench:enforcement` (apps/agent/src/shaping/shaper.ts): the
// Shaper fed with the live connections of BENCH_USERS users of whom BENCH_CAPPED have a cap,
// each with two connections. Two ways:
// - the agent's own work (CPU per pass), with a runner that takes the commands without a
//   kernel: the first pass (setup, a class per capped user, two u32 filters and a map element
//   per connection), a steady pass (nothing changed: nothing sent), a churn pass (10% of the
//   capped connections replaced by new ones); the baseline in the same run is the first pass of
//   a fresh Shaper for the same connections: what rebuilding everything each pass would cost;
// - the kernel's (wall time of the same passes with ip/tc/nft for real), in a network namespace
//   of the bench's own on a veth it makes (root, iproute2 and nftables needed; skipped without).
import { execFileSync } from 'node:child_process';
import type { UserLimits } from '@svc/proto';
import { type Runner, spawnRunner } from '../../apps/agent/src/shaping/shape-runner.ts';
import { Shaper } from '../../apps/agent/src/shaping/shaper.ts';
import { onCleanup } from '../common/run.ts';

const NS = 'svcbench-shape';
const DEV = 'svcbsh-s';

export interface ShaperFigures {
  firstMs: number;
  steadyMs: number;
  churnMs: number;
  rebuildMs: number;
  tcLines: number;
  nftLines: number;
  kernel: { firstMs: number; steadyMs: number; churnMs: number; stopMs: number; classes: number } | { skipped: string };
}

const cpuMs = (c0: NodeJS.CpuUsage) => {
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
};

const limits = (u: number, capped: boolean): UserLimits => ({
  subscriptionId: `sub_${u}`,
  deviceLimit: 0,
  uploadBps: capped ? 2_000_000n : 0n,
  downloadBps: capped ? 10_000_000n : 0n,
  notAfterMs: 0n,
  sliceId: 0n,
  sliceBytes: 0n,
});

/** Every user's connections (two each), the capped ones' tuples moved by `generation` for 10% of them. */
function connections(users: number, capped: number, generation: number): Map<string, Array<{ host: string; port: number }>> {
  const out = new Map<string, Array<{ host: string; port: number }>>();
  for (let u = 0; u < users; u++) {
    const host = `10.${(u >> 16) & 255}.${(u >> 8) & 255}.${u & 255}`;
    const moved = u < capped && u % 10 === 0 ? generation : 0;
    out.set(`sub_${u}@svc`, [
      { host, port: 20_000 + ((u * 2 + moved * 7) % 40_000) },
      { host, port: 20_000 + ((u * 2 + 1) % 40_000) },
    ]);
  }
  return out;
}

/** A runner that answers as a kernel that has nothing yet and accepts everything, counting the lines it was sent. */
function recordingRunner(): { run: Runner; lines: { tc: number; nft: number } } {
  const lines = { tc: 0, nft: 0 };
  const run: Runner = async (bin, args, input) => {
    const cmd = [bin, ...args].join(' ');
    if (input && cmd === 'tc -batch -') lines.tc += input.split('\n').length - 1;
    if (input && cmd === 'nft -f -') lines.nft += input.split('\n').length - 1;
    if (cmd.startsWith('ip -o link show dev')) return { code: 0, stdout: '7: eth0: <BROADCAST,UP> mtu 1500\n', stderr: '' };
    if (cmd.startsWith('tc qdisc show dev') && cmd.endsWith('root')) return { code: 0, stdout: 'qdisc mq 0: root\n', stderr: '' };
    return { code: 0, stdout: '', stderr: '' };
  };
  return { run, lines };
}

async function passes(shaper: Shaper, users: number, capped: number, measure: (fn: () => Promise<void>) => Promise<number>) {
  shaper.setLimits(Array.from({ length: users }, (_, u) => limits(u, u < capped)));
  const firstMs = await measure(() => shaper.apply(connections(users, capped, 0)));
  const steadyMs = await measure(() => shaper.apply(connections(users, capped, 0)));
  const churnMs = await measure(() => shaper.apply(connections(users, capped, 1)));
  return { firstMs, steadyMs, churnMs };
}

export async function speedCapPass(users: number, capped: number): Promise<ShaperFigures> {
  const rec = recordingRunner();
  const cpu = async (fn: () => Promise<void>) => {
    const c0 = process.cpuUsage();
    await fn();
    return cpuMs(c0);
  };
  const shaper = new Shaper({ devices: ['eth0'], run: rec.run, capability: async () => null });
  await shaper.probe();
  const own = await passes(shaper, users, capped, cpu);
  const tcLines = rec.lines.tc;
  const nftLines = rec.lines.nft;
  const fresh = new Shaper({ devices: ['eth0'], run: recordingRunner().run, capability: async () => null });
  await fresh.probe();
  fresh.setLimits(Array.from({ length: users }, (_, u) => limits(u, u < capped)));
  const rebuildMs = await cpu(() => fresh.apply(connections(users, capped, 1)));
  return { ...own, rebuildMs, tcLines, nftLines, kernel: await inKernel(users, capped) };
}

async function inKernel(users: number, capped: number): Promise<ShaperFigures['kernel']> {
  if (process.getuid?.() !== 0) return { skipped: 'not root' };
  try {
    for (const [bin, arg] of [
      ['ip', '-V'],
      ['tc', '-V'],
      ['nft', '--version'],
    ] as const)
      execFileSync(bin, [arg], { stdio: 'ignore' });
  } catch {
    return { skipped: 'ip, tc or nft missing' };
  }
  const sh = (...args: string[]) => execFileSync(args[0] as string, args.slice(1), { stdio: 'ignore' });
  try {
    sh('ip', 'netns', 'del', NS);
  } catch {}
  sh('ip', 'netns', 'add', NS);
  onCleanup(async () => {
    try {
      sh('ip', 'netns', 'del', NS);
    } catch {}
  });
  sh('ip', '-n', NS, 'link', 'add', DEV, 'type', 'veth', 'peer', 'name', `${DEV}p`);
  sh('ip', '-n', NS, 'link', 'set', DEV, 'up');
  const shaper = new Shaper({ devices: [DEV], run: spawnRunner(['ip', 'netns', 'exec', NS]), capability: async () => null });
  const probed = await shaper.probe();
  if (!probed.speedCaps) return { skipped: probed.error };
  const wall = async (fn: () => Promise<void>) => {
    const t0 = performance.now();
    await fn();
    return performance.now() - t0;
  };
  const figures = await passes(shaper, users, capped, wall);
  // What the kernel holds: three classes (inner, small, bulk) per capped user, or the passes failed.
  const classes = execFileSync('ip', ['netns', 'exec', NS, 'tc', 'class', 'show', 'dev', DEV]).toString().trim().split('\n').length;
  if (classes < capped * 3) return { skipped: `the passes failed: ${classes} classes for ${capped} capped users` };
  const stopMs = await wall(() => shaper.stop());
  return { ...figures, stopMs, classes };
}

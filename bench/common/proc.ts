// What the benchmarks read from /proc: CPU time, memory and reads of processes, and of the machine.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The soft limit on open files this process (and the children it starts) has: `ulimit -n`. */
export function openFilesLimit(): number {
  const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
  return m?.[1] === 'unlimited' ? Number.POSITIVE_INFINITY : Number(m?.[1] ?? 1024);
}

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** CPU seconds (user + sys) a process has used, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

/**
 * Minor page faults a process has taken (memory it touched for the first time since the kernel
 * gave it), from /proc/<pid>/stat. What they cost depends on the machine: ~0.1-0.3 µs on bare
 * hardware, ~15 µs in the Firecracker/PVM guest of 2026-12-01 (bench/BENCHMARKS.md).
 */
export function minorFaults(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[7]);
}

/**
 * What touching fresh memory costs on this machine: µs per 4 KiB page, from 64 MiB allocated and
 * filled in this process (the median of three; freed between). A property of the machine, not of
 * the product: it moves every figure that allocates.
 */
export function freshPageMicros(): number {
  const xs: number[] = [];
  for (let k = 0; k < 3; k++) {
    const t = performance.now();
    Buffer.alloc(64 * 2 ** 20, 1);
    xs.push(((performance.now() - t) * 1000) / (16 * 1024));
  }
  return xs.sort((a, b) => a - b)[1] as number;
}

/** Resident set size in bytes, from /proc/<pid>/status. */
export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) * 1024;
}

/** Peak resident set size in bytes (VmHWM, the high-water mark since the process started), from /proc/<pid>/status. */
export function peakRssBytes(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) * 1024;
}

/** Bytes a process has read through read(2)-like calls (rchar of /proc/<pid>/io: sockets included, page cache or not). */
export function bytesRead(pid: number): number {
  const m = /^rchar:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
  return Number(m?.[1] ?? 0);
}

/** CPU seconds the whole machine spent busy (all cores; /proc/stat, idle and iowait excluded). */
export function machineBusySeconds(): number {
  const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return (total - (f[3] ?? 0) - (f[4] ?? 0)) / CLK_TCK;
}

/** CPU seconds of a set of processes (ones that ended meanwhile are left out). */
export function cpuOf(pids: number[]): Map<number, number> {
  const m = new Map<number, number>();
  for (const p of pids) {
    try {
      m.set(p, cpuSeconds(p));
    } catch {}
  }
  return m;
}

/** CPU seconds used between two readings; a process absent from the first started in between. */
export const cpuDelta = (a: Map<number, number>, b: Map<number, number>) => {
  let s = 0;
  for (const [p, v] of b) s += v - (a.get(p) ?? 0);
  return s;
};

/** Named groups of processes whose CPU is read together, with the machine's, at one instant. */
export type CpuGroups = Record<string, () => number[] | Promise<number[]>>;
export interface CpuReading {
  at: number;
  machine: number;
  groups: Record<string, Map<number, number>>;
}

export async function readCpu(groups: CpuGroups): Promise<CpuReading> {
  const pids: Record<string, number[]> = {};
  for (const [k, f] of Object.entries(groups)) pids[k] = await f();
  const out: CpuReading = { at: performance.now(), machine: machineBusySeconds(), groups: {} };
  for (const [k, list] of Object.entries(pids)) out.groups[k] = cpuOf(list);
  return out;
}

/** % of one core per group between two readings, the machine's, and `other`: what the rest of the machine used. */
export function cpuPercent(a: CpuReading, b: CpuReading): Record<string, number> {
  const seconds = (b.at - a.at) / 1000;
  const out: Record<string, number> = {};
  let ours = 0;
  for (const k of Object.keys(b.groups)) {
    out[k] = (cpuDelta(a.groups[k] ?? new Map(), b.groups[k] as Map<number, number>) / seconds) * 100;
    ours += out[k] as number;
  }
  out.machine = ((b.machine - a.machine) / seconds) * 100;
  out.other = Math.max(0, (out.machine as number) - ours);
  return out;
}

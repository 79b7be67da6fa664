import { readFile, statfs } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import type { StatusReport } from '@svc/proto';

/**
 * The node's StatusReport: CPU use since the previous report (all cores, /proc/stat through
 * os.cpus), memory in use (MemTotal - MemAvailable), the state directory's file system, the
 * engine's state and uptime, and the established TCP connections on the inbounds' ports
 * (/proc/net/tcp and tcp6; the engine itself keeps no count).
 */
export class StatusSampler {
  private lastCpu = cpuTimes();

  constructor(private readonly stateDir: string) {}

  async sample(engine: { running: boolean; uptimeSeconds: number; ports: Set<number> }): Promise<StatusReport> {
    const now = cpuTimes();
    const busy = now.busy - this.lastCpu.busy;
    const total = now.total - this.lastCpu.total;
    this.lastCpu = now;
    const mem = await memory();
    const disk = await statfs(this.stateDir).then(
      (s) => ({ total: BigInt(s.blocks) * BigInt(s.bsize), free: BigInt(s.bavail) * BigInt(s.bsize) }),
      () => ({ total: 0n, free: 0n }),
    );
    return {
      xrayRunning: engine.running,
      cpuPercent: total > 0 ? Math.round((busy / total) * 1000) / 10 : 0,
      memoryUsedBytes: mem.used,
      memoryTotalBytes: mem.total,
      diskUsedBytes: disk.total - disk.free,
      diskTotalBytes: disk.total,
      connections: engine.running ? await establishedOn(engine.ports) : 0,
      xrayUptimeSeconds: BigInt(engine.running ? engine.uptimeSeconds : 0),
      enforcement: undefined,
    };
  }
}

function cpuTimes(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const c of cpus()) {
    const t = c.times.user + c.times.nice + c.times.sys + c.times.irq + c.times.idle;
    total += t;
    busy += t - c.times.idle;
  }
  return { busy, total };
}

async function memory(): Promise<{ used: bigint; total: bigint }> {
  try {
    const info = await readFile('/proc/meminfo', 'utf8');
    const kb = (name: string) => BigInt(/^(\d+)/.exec(info.split(`${name}:`)[1]?.trim() ?? '')?.[1] ?? '0') * 1024n;
    const total = kb('MemTotal');
    return { total, used: total - kb('MemAvailable') };
  } catch {
    return { total: BigInt(totalmem()), used: 0n };
  }
}

/** Established TCP connections whose local port is one of `ports`. */
export async function establishedOn(ports: Set<number>): Promise<number> {
  if (ports.size === 0) return 0;
  let n = 0;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(file, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[3] !== '01') continue;
      const local = cols[1] ?? '';
      const port = Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16);
      if (ports.has(port)) n++;
    }
  }
  return Math.min(n, 2 ** 31 - 1);
}

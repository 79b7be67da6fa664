// The agent's apply machinery wired as `svc-agent run` wires it (apps/agent/src/agent.ts), without
// the Sync session: a temporary state directory, the real EngineProcess running the real engine
// binary (Debian's v2ray 4.34 unless SVC_AGENT_ENGINE_BIN/SVC_AGENT_ENGINE_API say otherwise),
// the engine API client and the Applier; usage collection and connection cutting are no-ops.
// The engine is an EngineProcess subclass that only records how long each start and stop took.
import { execFileSync } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createEngineApi, type EngineApi } from '@svc/engine-api';
import { type DesiredState, LogSource } from '@svc/proto';
import { pino } from 'pino';
import { Applier } from '../../apps/agent/src/apply/applier.ts';
import { freeLoopbackPort } from '../../apps/agent/src/engine/engine-cli.ts';
import { EngineProcess, type EngineRecord } from '../../apps/agent/src/engine/engine-process.ts';
import { type EngineSettings, engineSettingsFrom } from '../../apps/agent/src/engine/engine-settings.ts';
import { LogRing } from '../../apps/agent/src/log-rings.ts';
import { onCleanup, tempDir } from '../common/run.ts';

/** The engine the benchmarks run: v2ray 4 by default (the engine installed on the bench machine). */
export function benchEngine(): EngineSettings {
  const settings = engineSettingsFrom({ SVC_AGENT_ENGINE_BIN: 'v2ray', SVC_AGENT_ENGINE_API: 'v2ray', ...process.env });
  try {
    execFileSync(settings.bin, settings.flavour === 'xray' ? ['version'] : ['-version'], { stdio: 'ignore' });
  } catch (err) {
    throw new Error(
      `the engine ${settings.bin} does not run (${(err as Error).message}); install v2ray (apt-get install v2ray) or set SVC_AGENT_ENGINE_BIN`,
    );
  }
  return settings;
}

/** An EngineProcess that records the duration of every start (until the API port answers) and stop. */
export class TimedEngine extends EngineProcess {
  readonly starts: number[] = [];
  readonly stops: number[] = [];

  override async start(configFile: string, apiPort: number): Promise<EngineRecord> {
    const t = performance.now();
    try {
      return await super.start(configFile, apiPort);
    } finally {
      this.starts.push(performance.now() - t);
    }
  }

  override async stop(graceMs?: number): Promise<void> {
    const t = performance.now();
    try {
      await super.stop(graceMs);
    } finally {
      this.stops.push(performance.now() - t);
    }
  }
}

export interface AgentRig {
  stateDir: string;
  apiPort: number;
  engine: TimedEngine;
  api: EngineApi;
  applier: Applier;
  /** Another Applier over the same state directory and engine, starting from `applied`. */
  newApplier(applied: DesiredState | null): Applier;
  /** Stops the engine and closes the API client. */
  close(): Promise<void>;
}

export async function agentRig(settings: EngineSettings): Promise<AgentRig> {
  const stateDir = tempDir('svc-bench-agent-');
  await mkdir(join(stateDir, 'engine'), { recursive: true, mode: 0o700 });
  const log = pino({ level: 'silent' });
  const engine = new TimedEngine(settings, join(stateDir, 'engine'), new LogRing(LogSource.XRAY), log);
  await engine.follow();
  const apiPort = await freeLoopbackPort();
  const api = createEngineApi({ address: `127.0.0.1:${apiPort}`, flavour: settings.flavour, packagePrefix: settings.apiPrefix });
  const newApplier = (applied: DesiredState | null) =>
    new Applier({ stateDir, engine, users: api, apiPort: () => apiPort, log, collect: async () => {}, cut: async () => {} }, applied);
  const applier = newApplier(null);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await engine.stop();
    engine.detach();
    api.close();
  };
  onCleanup(close);
  return { stateDir, apiPort, engine, api, applier, newApplier, close };
}

/** A field of /proc/<pid>/status in bytes (VmRSS: resident now; VmHWM: the peak so far), or 0. */
export async function procMemory(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const line = status.split('\n').find((l) => l.startsWith(`${field}:`));
  return line ? Number.parseInt(line.slice(field.length + 1).trim(), 10) * 1024 : 0;
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
export const ms = (x: number) => (Number.isNaN(x) ? '—' : x.toFixed(x < 10 ? 2 : x < 1000 ? 1 : 0));

/** Runs `fn` `times` times; the durations in ms. */
export async function timed(times: number, fn: () => Promise<unknown> | unknown): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < times; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

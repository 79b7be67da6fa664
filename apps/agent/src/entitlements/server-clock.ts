import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readOptional, writeFileAtomic } from '../state-files.ts';

/**
 * The control plane's time as the agent estimates it, for UserLimits.not_after_ms (a time of the
 * control plane). The agent never trusts its own wall clock once it has heard the control
 * plane's: ServerMessage.clock (sent when the stream opens) gives
 *
 *     offset = server now_ms − monotonic ms     and then     server now ≈ monotonic ms + offset
 *
 * where the monotonic clock is CLOCK_MONOTONIC (process.hrtime.bigint(): system-wide, counted
 * from the boot, never set by NTP or an operator). So a jump of the node's wall clock, forward
 * or back, moves nothing. The offset is kept in the state directory with the kernel's boot id
 * (/proc/sys/kernel/random/boot_id): an agent restarted while the control plane is away keeps
 * it; after a reboot the monotonic clock starts again from 0 and the saved offset means
 * nothing, so it is dropped.
 *
 * Without an offset (a reboot while the control plane is away, or a control plane of the
 * previous release that sends no clock) the agent falls back to its wall clock, read once when
 * the estimate starts and carried on by the monotonic clock from there: a wall-clock jump after
 * that start still moves nothing. What the fallback cannot know is a wall clock already wrong
 * at that moment; the next ServerClock replaces it.
 *
 * Errors go the safe way: now_ms is read when the message arrives, after its trip from the
 * control plane, so the estimate runs behind by that trip (milliseconds): a cut comes that much
 * late, never early. CLOCK_MONOTONIC does not count a suspended machine, which again only
 * makes cuts late.
 */
export interface ClockSources {
  /** Monotonic milliseconds (default: process.hrtime.bigint() / 1e6). */
  monotonic?: () => number;
  /** Wall-clock milliseconds (default: Date.now). */
  wall?: () => number;
  /** This boot's id, or null where the kernel gives none (default: /proc/sys/kernel/random/boot_id). */
  bootId?: () => Promise<string | null>;
}

export type ClockSource = 'server' | 'wall';

const FILE = 'clock.json';

export const monotonicMs = (): number => Number(process.hrtime.bigint() / 1_000_000n);

export async function kernelBootId(): Promise<string | null> {
  try {
    return (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim() || null;
  } catch {
    return null;
  }
}

export class ServerClockEstimate {
  private constructor(
    private readonly dir: string,
    private readonly monotonic: () => number,
    private readonly bootId: string | null,
    private offset: number,
    private origin: ClockSource,
  ) {}

  /** The saved offset when it was taken on this boot, else the wall clock carried by the monotonic clock. */
  static async open(dir: string, sources: ClockSources = {}): Promise<ServerClockEstimate> {
    const monotonic = sources.monotonic ?? monotonicMs;
    const wall = sources.wall ?? Date.now;
    const bootId = await (sources.bootId ?? kernelBootId)();
    const saved = parseSaved(await readOptional(join(dir, FILE)));
    if (saved && bootId !== null && saved.bootId === bootId) return new ServerClockEstimate(dir, monotonic, bootId, saved.offset, 'server');
    return new ServerClockEstimate(dir, monotonic, bootId, wall() - monotonic(), 'wall');
  }

  /** The control plane's time now (Unix ms), as estimated. */
  now(): number {
    return this.monotonic() + this.offset;
  }

  /** Where the estimate comes from: a ServerClock (this boot), or the node's wall clock. */
  get source(): ClockSource {
    return this.origin;
  }

  /** ServerMessage.clock: the control plane's time now. Saved with the boot id. */
  async heard(serverNowMs: number): Promise<void> {
    this.offset = serverNowMs - this.monotonic();
    this.origin = 'server';
    if (this.bootId !== null)
      await writeFileAtomic(join(this.dir, FILE), `${JSON.stringify({ boot_id: this.bootId, offset_ms: this.offset })}\n`);
  }
}

function parseSaved(text: string | null): { bootId: string; offset: number } | null {
  if (text === null) return null;
  try {
    const v = JSON.parse(text) as { boot_id?: unknown; offset_ms?: unknown };
    if (typeof v.boot_id === 'string' && typeof v.offset_ms === 'number' && Number.isFinite(v.offset_ms))
      return { bootId: v.boot_id, offset: v.offset_ms };
  } catch {}
  return null;
}

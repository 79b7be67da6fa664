import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { readOptional, writeFileAtomic } from '../state-files.ts';
import { pointCurrentAt } from './release-dir.ts';

/**
 * An upgrade between the old agent swapping the new release in and the new agent reaching the
 * control plane: `upgrade.json` in the state directory. The new agent counts its starts in it and
 * removes it once a stream to the control plane has stayed up (the upgrade holds); an agent that
 * does not get there is put back (rollBack), and the old agent, started again, says why.
 */
export interface PendingUpgrade {
  command_id: string;
  from_version: string;
  from_file: string;
  to_version: string;
  to_file: string;
  /** Starts of the new release so far. */
  starts: number;
  requested_at: string;
  /** Set when the old release was put back: why. */
  rolled_back?: string;
}

const FILE = 'upgrade.json';

/** Starts of a new release that does not reach the control plane before it is put back. */
export const MAX_STARTS = 3;
/** How long a new release has to hold a stream to the control plane. */
export const HOLD_WITHIN_MS = 5 * 60_000;
/** A stream that stayed up this long proves the new release (and carries the result). */
export const HELD_AFTER_MS = 3_000;

export async function readPending(stateDir: string): Promise<PendingUpgrade | null> {
  const text = await readOptional(join(stateDir, FILE));
  if (text === null) return null;
  try {
    const p = JSON.parse(text) as PendingUpgrade;
    return typeof p.command_id === 'string' && typeof p.to_version === 'string' && typeof p.from_file === 'string' ? p : null;
  } catch {
    return null;
  }
}

export const writePending = (stateDir: string, p: PendingUpgrade) =>
  writeFileAtomic(join(stateDir, FILE), `${JSON.stringify(p, null, 2)}\n`);
export const clearPending = (stateDir: string) => rm(join(stateDir, FILE), { force: true });

/** What a pending upgrade means for the agent that starts. */
export type UpgradeOnStart =
  | { kind: 'none' }
  /** This agent is the new release: it proves itself by holding a stream (then reports success). */
  | { kind: 'trying'; pending: PendingUpgrade }
  /** This agent is not the release asked for (the old one put back, or another): it reports the failure. */
  | { kind: 'failed'; pending: PendingUpgrade; error: string }
  /** This agent is the new release and has started MAX_STARTS times without reaching the control plane. */
  | { kind: 'roll-back'; pending: PendingUpgrade; reason: string };

export async function upgradeOnStart(stateDir: string, version: string): Promise<UpgradeOnStart> {
  const pending = await readPending(stateDir);
  if (!pending) return { kind: 'none' };
  if (pending.rolled_back !== undefined) return { kind: 'failed', pending, error: pending.rolled_back };
  if (pending.to_version !== version)
    return {
      kind: 'failed',
      pending,
      error: `svc-agent ${version} runs instead of ${pending.to_version} (replaced on the node meanwhile?)`,
    };
  const next = { ...pending, starts: pending.starts + 1 };
  await writePending(stateDir, next);
  if (next.starts > MAX_STARTS)
    return {
      kind: 'roll-back',
      pending: next,
      reason: `svc-agent ${version} stopped ${MAX_STARTS} times before it held a stream to the control plane; svc-agent ${pending.from_version} was put back`,
    };
  return { kind: 'trying', pending: next };
}

/** Puts the old release back in current.mjs and records why (the old agent reports it). */
export async function rollBack(stateDir: string, releaseDir: string, pending: PendingUpgrade, reason: string): Promise<void> {
  await pointCurrentAt(releaseDir, pending.from_file);
  await writePending(stateDir, { ...pending, rolled_back: reason });
}

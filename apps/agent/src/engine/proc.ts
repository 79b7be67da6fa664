import { readFile } from 'node:fs/promises';

/**
 * Facts about a process from /proc (Linux): whether a pid is still the process we started, not
 * another one that reused the number. The start time (field 22 of /proc/<pid>/stat, clock ticks
 * since boot) names a process instance.
 */
export async function processStartTicks(pid: number): Promise<string | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may contain spaces.
    const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const state = after[0];
    if (state === 'Z' || state === 'X') return null;
    return after[19] ?? null;
  } catch {
    return null;
  }
}

/** Whether `pid` is alive and started at `startTicks`. */
export async function isSameProcess(pid: number, startTicks: string): Promise<boolean> {
  return (await processStartTicks(pid)) === startTicks;
}

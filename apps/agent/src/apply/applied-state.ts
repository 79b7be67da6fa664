import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DesiredState } from '@svc/proto';
import { writeFileAtomic } from '../state-files.ts';

/**
 * The last desired state the node applied, on disk (0600: it holds user credentials): its
 * revision goes into Hello.applied_revision after a restart, and its configuration is what the
 * next snapshot is compared with. Kept in the contract's own encoding.
 */
export const appliedFile = (stateDir: string) => join(stateDir, 'applied.bin');

export async function loadApplied(stateDir: string): Promise<DesiredState | null> {
  try {
    return DesiredState.decode(await readFile(appliedFile(stateDir)));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`${appliedFile(stateDir)} does not decode (${(err as Error).message}); remove it to start from revision 0`);
  }
}

export async function saveApplied(stateDir: string, state: DesiredState): Promise<void> {
  await writeFileAtomic(appliedFile(stateDir), DesiredState.encode(state).finish());
}

import type { Db } from '@svc/db';
import { ConflictError } from '../errors.ts';
import { advisoryXactLock } from '../shared/locks.ts';

/**
 * The installation always keeps one owner: called inside the transaction that would
 * demote or delete `adminId`. The lock makes two concurrent demotions of the last two
 * owners see each other.
 */
export async function assertNotLastOwner(trx: Db, adminId: string, change: 'delete' | 'demote'): Promise<void> {
  await advisoryXactLock(trx, 'svc.admins.owners');
  const owners = await trx.selectFrom('admins').select('id').where('role', '=', 'owner').execute();
  if (owners.length === 1 && owners[0]?.id === adminId) {
    throw new ConflictError(
      change === 'delete' ? 'the last owner cannot be deleted' : 'the last owner cannot be demoted',
      change === 'demote' ? { role: 'the installation needs at least one owner' } : undefined,
    );
  }
}

import type { Db } from '@svc/db';
import { ForbiddenError } from '../errors.ts';
import type { Actor } from '../shared/context.ts';

/**
 * Managing admins and installation settings (spec 5.4) need an owner *now*, not only when
 * the access token was signed: a token lives 15 minutes, and an owner who was just deleted or
 * demoted must not use those minutes to create a new owner account. Checked inside the
 * changing transaction. The shell (system actor) is always allowed.
 */
export async function assertActorIsOwner(trx: Db, actor: Actor, what = 'managing admins'): Promise<void> {
  if (actor.type === 'system') return;
  const row =
    actor.type === 'admin' && actor.id
      ? await trx.selectFrom('admins').select('role').where('id', '=', actor.id).executeTakeFirst()
      : undefined;
  if (row?.role !== 'owner') throw new ForbiddenError(`${what} needs the owner role, which this account does not have`);
}

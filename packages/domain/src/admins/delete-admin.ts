import { adminAccessChanged } from '../auth/admin-access.ts';
import { NotFoundError } from '../errors.ts';
import { recordEvent } from '../events/record-event.ts';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { assertActorIsOwner } from './actor-guard.ts';
import { assertNotLastOwner } from './owner-guard.ts';

export async function deleteAdmin(ctx: DomainContext, id: string): Promise<void> {
  await unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    await assertActorIsOwner(trx, ctx.actor);
    const current = await trx.selectFrom('admins').select(['id', 'role', 'email']).where('id', '=', id).forUpdate().executeTakeFirst();
    if (!current) throw new NotFoundError('admin', id);
    if (current.role === 'owner') await assertNotLastOwner(trx, id, 'delete');
    await trx.deleteFrom('sessions').where('subject_type', '=', 'admin').where('subject_id', '=', id).execute();
    await trx.deleteFrom('admins').where('id', '=', id).execute();
    // Its access tokens stop at the next request, in every process (issue 12.7).
    adminAccessChanged(uow, ctx, id);
    uow.audit({
      action: 'admin.deleted',
      entity_type: 'admin',
      entity_id: id,
      details: { email: current.email, role: current.role },
    });
    await recordEvent(uow, { type: 'admin.deleted', payload: { admin_id: id, email: current.email, role: current.role } }, ctx.clock.now());
  });
}

import { writeAudit } from '../audit/write-audit.ts';
import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { assertActorIsOwner } from './actor-guard.ts';
import { assertNotLastOwner } from './owner-guard.ts';

export async function deleteAdmin(ctx: DomainContext, id: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    await assertActorIsOwner(trx, ctx.actor);
    const current = await trx.selectFrom('admins').select(['id', 'role', 'email']).where('id', '=', id).forUpdate().executeTakeFirst();
    if (!current) throw new NotFoundError('admin', id);
    if (current.role === 'owner') await assertNotLastOwner(trx, id, 'delete');
    await trx.deleteFrom('sessions').where('subject_type', '=', 'admin').where('subject_id', '=', id).execute();
    await trx.deleteFrom('admins').where('id', '=', id).execute();
    await writeAudit(trx, ctx, {
      action: 'admin.deleted',
      entity_type: 'admin',
      entity_id: id,
      details: { email: current.email, role: current.role },
    });
  });
}

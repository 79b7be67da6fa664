import { ConflictError, NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { idList, isForeignKeyViolation } from '../shared/db-errors.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';

const BLOCKERS_SHOWN = 100;

/** Refused (409) while inbounds are bound to the profile; nothing runs it, so no revision moves. */
export async function deleteInboundProfile(ctx: DomainContext, id: string): Promise<void> {
  await unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    // FOR UPDATE waits for (and then blocks) inbounds being bound right now.
    const current = await trx.selectFrom('inbound_profiles').select(['id', 'name']).where('id', '=', id).forUpdate().executeTakeFirst();
    if (!current) throw new NotFoundError('inbound profile', id);
    const bound = await trx.selectFrom('inbounds').select('id').where('profile_id', '=', id).orderBy('id').limit(BLOCKERS_SHOWN).execute();
    if (bound.length > 0) throw profileInUse(bound.map((r) => r.id));
    await trx
      .deleteFrom('inbound_profiles')
      .where('id', '=', id)
      .execute()
      .catch((err: unknown) => {
        if (isForeignKeyViolation(err)) throw profileInUse([]);
        throw err;
      });
    uow.audit({
      action: 'inbound_profile.deleted',
      entity_type: 'inbound_profile',
      entity_id: id,
      details: { name: current.name },
    });
  });
}

const profileInUse = (ids: string[]) =>
  new ConflictError(
    `the inbound profile is bound by inbounds${ids.length ? ` (${idList(ids)})` : ''}; delete or rebind them first`,
    undefined,
    {
      blocked_by: { inbounds: ids },
    },
  );

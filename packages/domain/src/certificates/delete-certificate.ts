import { ConflictError, NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { idList, isForeignKeyViolation } from '../shared/db-errors.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';

/** Refused (409) while an inbound profile uses the certificate; nothing serves it, so no revision moves. */
export async function deleteCertificate(ctx: DomainContext, id: string): Promise<void> {
  await unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const current = await trx
      .selectFrom('certificates')
      .select(['id', 'name', 'domains'])
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    if (!current) throw new NotFoundError('certificate', id);
    const profiles = await trx
      .selectFrom('inbound_profiles')
      .select('id')
      .where('certificate_id', '=', id)
      .orderBy('id')
      .limit(100)
      .execute();
    if (profiles.length > 0) throw certificateInUse(profiles.map((p) => p.id));
    await trx
      .deleteFrom('certificates')
      .where('id', '=', id)
      .execute()
      .catch((err: unknown) => {
        if (isForeignKeyViolation(err)) throw certificateInUse([]);
        throw err;
      });
    uow.audit({
      action: 'certificate.deleted',
      entity_type: 'certificate',
      entity_id: id,
      details: { name: current.name, domains: current.domains },
    });
  });
}

const certificateInUse = (ids: string[]) =>
  new ConflictError(`the certificate is used by inbound profiles${ids.length ? ` (${idList(ids)})` : ''}; change them first`, undefined, {
    blocked_by: { inbound_profiles: ids },
  });

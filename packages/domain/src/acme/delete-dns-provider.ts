import { blockedError, collectBlockers, hasBlockers } from '../billing/references.ts';
import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';

/**
 * Refused (409) while a certificate names the provider for its DNS-01 challenges
 * (certificates.dns_provider_id has no foreign key: this check is the rule). The row lock
 * makes a certificate write that locks the provider first (FOR SHARE) see the deletion.
 */
export async function deleteDnsProvider(ctx: DomainContext, id: string): Promise<void> {
  await unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const current = await trx
      .selectFrom('dns_providers')
      .select(['id', 'kind', 'name'])
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    if (!current) throw new NotFoundError('DNS provider', id);
    const blockers = await collectBlockers(trx, id, [{ table: 'certificates', column: 'dns_provider_id' }]);
    if (hasBlockers(blockers)) throw blockedError(`DNS provider ${id}`, blockers);
    await trx.deleteFrom('dns_providers').where('id', '=', id).execute();
    uow.audit({
      action: 'dns_provider.deleted',
      entity_type: 'dns_provider',
      entity_id: id,
      details: { kind: current.kind, name: current.name },
    });
  });
}

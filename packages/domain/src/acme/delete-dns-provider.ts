import { writeAudit } from '../audit/write-audit.ts';
import { blockedError, collectBlockers, hasBlockers } from '../billing/references.ts';
import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';

/**
 * Refused (409) while a certificate names the provider for its DNS-01 challenges
 * (certificates.dns_provider_id has no foreign key: this check is the rule). The row lock
 * makes a certificate write that locks the provider first (FOR SHARE) see the deletion.
 */
export async function deleteDnsProvider(ctx: DomainContext, id: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
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
    await writeAudit(trx, ctx, {
      action: 'dns_provider.deleted',
      entity_type: 'dns_provider',
      entity_id: id,
      details: { kind: current.kind, name: current.name },
    });
  });
}

import { blockedError, collectBlockers, hasBlockers } from '../billing/references.ts';
import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';

/**
 * Refused (409) while a certificate is issued through the account
 * (certificates.acme_account_id has no foreign key: this check is the rule).
 */
export async function deleteAcmeAccount(ctx: DomainContext, id: string): Promise<void> {
  await unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const current = await trx
      .selectFrom('acme_accounts')
      .select(['id', 'email', 'directory_url'])
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    if (!current) throw new NotFoundError('ACME account', id);
    const blockers = await collectBlockers(trx, id, [{ table: 'certificates', column: 'acme_account_id' }]);
    if (hasBlockers(blockers)) throw blockedError(`ACME account ${id}`, blockers);
    await trx.deleteFrom('acme_accounts').where('id', '=', id).execute();
    uow.audit({
      action: 'acme_account.deleted',
      entity_type: 'acme_account',
      entity_id: id,
      details: { email: current.email, directory_url: current.directory_url },
    });
  });
}

import { normalizeEmail } from '../admins/admin-view.ts';
import { ConflictError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { isUniqueViolation } from '../shared/db-errors.ts';
import { newId } from '../shared/ids.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { type AcmeAccountView, acmeAccountView, LETS_ENCRYPT_PRODUCTION, normalizeDirectoryUrl } from './acme-account-view.ts';

export interface CreateAcmeAccountInput {
  email: string;
  /** Default: Let's Encrypt production. */
  directory_url?: string | undefined;
}

const taken = () =>
  new ConflictError('an ACME account with this email exists for this directory', {
    email: 'already has an account at this directory_url',
  });

/** Records the account; registering it with the ACME server (key, account URL) is the ACME issue's. */
export async function createAcmeAccount(ctx: DomainContext, input: CreateAcmeAccountInput): Promise<AcmeAccountView> {
  const email = normalizeEmail(input.email);
  const directoryUrl = normalizeDirectoryUrl(input.directory_url ?? LETS_ENCRYPT_PRODUCTION);
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const existing = await trx
      .selectFrom('acme_accounts')
      .select('id')
      .where('email', '=', email)
      .where('directory_url', '=', directoryUrl)
      .executeTakeFirst();
    if (existing) throw taken();
    const now = ctx.clock.now();
    const row = await trx
      .insertInto('acme_accounts')
      .values({
        id: newId('acm', now.getTime()),
        email,
        directory_url: directoryUrl,
        account_key_enc: null,
        account_url: null,
        created_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch((err: unknown) => {
        // Lost a race with a concurrent create of the same pair.
        if (isUniqueViolation(err, 'acme_accounts_email_directory')) throw taken();
        throw err;
      });
    uow.audit({
      action: 'acme_account.created',
      entity_type: 'acme_account',
      entity_id: row.id,
      details: { email, directory_url: directoryUrl },
    });
    return acmeAccountView(row);
  });
}

import { emailKey } from '../auth/credential-fields.ts';
import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { keysetRows, type Page, type PageRequest, toPage } from '../shared/pagination.ts';
import { type AcmeAccountView, acmeAccountView } from './acme-account-view.ts';

export interface AcmeAccountFilter extends PageRequest {
  email?: string | undefined;
}

/** Oldest first, by id. */
export async function listAcmeAccounts(ctx: Pick<DomainContext, 'db'>, f: AcmeAccountFilter): Promise<Page<AcmeAccountView>> {
  let q = ctx.db.selectFrom('acme_accounts').selectAll();
  if (f.email !== undefined) q = q.where('email', '=', emailKey(f.email));
  const rows = await keysetRows(q, f);
  return toPage(rows, f.limit, acmeAccountView);
}

export async function getAcmeAccount(ctx: Pick<DomainContext, 'db'>, id: string): Promise<AcmeAccountView> {
  const row = await ctx.db.selectFrom('acme_accounts').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('ACME account', id);
  return acmeAccountView(row);
}

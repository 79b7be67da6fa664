import { emailKey } from '../auth/credential-fields.ts';
import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { keysetRows, type Page, type PageRequest, toPage } from '../shared/pagination.ts';
import { type AcmeAccountView, acmeAccountView } from './acme-account-view.ts';
import { visibleError } from './answer-visibility.ts';

/** The account as `actor` reads it: a viewer does not read the registration error's words. */
const readView = (actor: DomainContext['actor'], r: Parameters<typeof acmeAccountView>[0]): AcmeAccountView => {
  const view = acmeAccountView(r);
  return { ...view, registration_error: visibleError(actor, view.registration_error) };
};

export interface AcmeAccountFilter extends PageRequest {
  email?: string | undefined;
}

/** Oldest first, by id. */
export async function listAcmeAccounts(ctx: Pick<DomainContext, 'db' | 'actor'>, f: AcmeAccountFilter): Promise<Page<AcmeAccountView>> {
  let q = ctx.db.selectFrom('acme_accounts').selectAll();
  if (f.email !== undefined) q = q.where('email', '=', emailKey(f.email));
  const rows = await keysetRows(q, f);
  return toPage(rows, f.limit, (r) => readView(ctx.actor, r));
}

export async function getAcmeAccount(ctx: Pick<DomainContext, 'db' | 'actor'>, id: string): Promise<AcmeAccountView> {
  const row = await ctx.db.selectFrom('acme_accounts').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('ACME account', id);
  return readView(ctx.actor, row);
}

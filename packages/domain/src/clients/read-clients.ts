import type { ClientStatus } from '@svc/db';
import { sql } from 'kysely';
import { emailKey } from '../auth/credential-fields.ts';
import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { type ListPage, type ListRequest, type ListSpec, listPage, searchTerms } from '../shared/list-query.ts';
import { type ClientView, clientView } from './client-view.ts';

export interface ClientFilter extends ListRequest {
  /** `pending` is the application queue. */
  status?: ClientStatus | undefined;
  /** Exact address, compared case-insensitively. */
  email?: string | undefined;
}

export const CLIENT_LIST: ListSpec = {
  idColumn: 'id',
  defaultSort: 'created',
  sorts: { email: { expr: sql`email`, kind: 'text' } },
};

/**
 * Oldest first by default (keyset; the status filter walks the (status, id) index). `q`
 * matches an id or email by its start, and from 3 characters anywhere in the email or note.
 */
export async function listClients(ctx: Pick<DomainContext, 'db'>, f: ClientFilter): Promise<ListPage<ClientView>> {
  return listPage(ctx.db, clientsMatching(ctx, f), f, CLIENT_LIST, (rows) => rows.map(clientView));
}

/** The clients a list filter selects (status, email, q): the list pages them, a bulk action takes them all. */
export function clientsMatching(ctx: Pick<DomainContext, 'db'>, f: Pick<ClientFilter, 'status' | 'email' | 'q'>) {
  let q = ctx.db.selectFrom('clients').selectAll();
  if (f.status) q = q.where('status', '=', f.status);
  if (f.email) q = q.where('email', '=', emailKey(f.email));
  const terms = searchTerms(f.q);
  if (terms)
    q = q.where((eb) =>
      eb.or([
        eb('id', 'like', terms.prefix),
        eb('email', 'like', terms.substring ? terms.contains : terms.prefix),
        ...(terms.substring ? [eb('note', 'ilike', terms.contains)] : []),
      ]),
    );
  return q;
}

export async function getClient(ctx: Pick<DomainContext, 'db'>, id: string): Promise<ClientView> {
  const row = await ctx.db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('client', id);
  return clientView(row);
}

import type { ClientStatus } from '@svc/db';
import { emailKey } from '../auth/credential-fields.ts';
import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { keysetRows, type Page, type PageRequest, toPage } from '../shared/pagination.ts';
import { type ClientView, clientView } from './client-view.ts';

export interface ClientFilter extends PageRequest {
  /** `pending` is the application queue. */
  status?: ClientStatus | undefined;
  /** Exact address, compared case-insensitively. */
  email?: string | undefined;
}

/** Oldest first, by id (keyset; the status filter walks the (status, id) index). */
export async function listClients(ctx: Pick<DomainContext, 'db'>, f: ClientFilter): Promise<Page<ClientView>> {
  let q = ctx.db.selectFrom('clients').selectAll();
  if (f.status) q = q.where('status', '=', f.status);
  if (f.email) q = q.where('email', '=', emailKey(f.email));
  const rows = await keysetRows(q, f);
  return toPage(rows, f.limit, clientView);
}

export async function getClient(ctx: Pick<DomainContext, 'db'>, id: string): Promise<ClientView> {
  const row = await ctx.db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('client', id);
  return clientView(row);
}

import { emailKey } from '../auth/credential-fields.ts';
import { NotFoundError, UnauthenticatedError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { keysetRows, type Page, type PageRequest, toPage } from '../shared/pagination.ts';
import { type AdminView, adminView } from './admin-view.ts';

export interface AdminFilter extends PageRequest {
  role?: 'owner' | 'admin' | 'viewer' | undefined;
  email?: string | undefined;
}

/** Oldest first, by id. */
export async function listAdmins(ctx: Pick<DomainContext, 'db'>, f: AdminFilter): Promise<Page<AdminView>> {
  let q = ctx.db.selectFrom('admins').selectAll();
  if (f.role) q = q.where('role', '=', f.role);
  if (f.email) q = q.where('email', '=', emailKey(f.email));
  const rows = await keysetRows(q, f);
  return toPage(rows, f.limit, adminView);
}

export async function getAdmin(ctx: Pick<DomainContext, 'db'>, id: string): Promise<AdminView> {
  const row = await ctx.db.selectFrom('admins').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('admin', id);
  return adminView(row);
}

export async function adminCount(ctx: Pick<DomainContext, 'db'>): Promise<number> {
  const r = await ctx.db
    .selectFrom('admins')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** The admin behind an access token; a token that outlived its admin is an authentication failure. */
export async function getCurrentAdmin(ctx: Pick<DomainContext, 'db'>, id: string): Promise<AdminView> {
  const row = await ctx.db.selectFrom('admins').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new UnauthenticatedError('the admin of this token no longer exists');
  return adminView(row);
}

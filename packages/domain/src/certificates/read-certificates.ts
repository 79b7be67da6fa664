import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { decodeCursor, type Page, type PageRequest, toPage } from '../shared/pagination.ts';
import { type CertificateView, certificateView } from './certificate.ts';

export interface CertificateFilter extends PageRequest {
  kind?: 'uploaded' | 'acme' | undefined;
  status?: string | undefined;
}

/** Oldest first, by id. */
export async function listCertificates(ctx: Pick<DomainContext, 'db'>, f: CertificateFilter): Promise<Page<CertificateView>> {
  const after = decodeCursor(f.cursor);
  let q = ctx.db.selectFrom('certificates').selectAll();
  if (f.kind) q = q.where('kind', '=', f.kind);
  if (f.status) q = q.where('status', '=', f.status);
  if (after) q = q.where('id', '>', after);
  const rows = await q
    .orderBy('id', 'asc')
    .limit(f.limit + 1)
    .execute();
  return toPage(rows, f.limit, certificateView);
}

export async function getCertificate(ctx: Pick<DomainContext, 'db'>, id: string): Promise<CertificateView> {
  const row = await ctx.db.selectFrom('certificates').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('certificate', id);
  return certificateView(row);
}

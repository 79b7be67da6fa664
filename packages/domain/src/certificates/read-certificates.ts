import { visibleError } from '../acme/answer-visibility.ts';
import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { keysetRows, type Page, type PageRequest, toPage } from '../shared/pagination.ts';
import { type CertificateView, certificateView } from './certificate.ts';

/** The certificate as `actor` reads it: a viewer does not read the last error's words (the CA's, the DNS provider's). */
const readView = (actor: DomainContext['actor'], r: Parameters<typeof certificateView>[0]): CertificateView => {
  const view = certificateView(r);
  return { ...view, last_error: visibleError(actor, view.last_error) };
};

export interface CertificateFilter extends PageRequest {
  kind?: 'uploaded' | 'acme' | undefined;
  status?: string | undefined;
  /** Not expired, and expiring within this many days (the dashboard's "expiring" is EXPIRING_SOON_DAYS). */
  expiring_within_days?: number | undefined;
  /** true: the last issuance or renewal failed (last_error set); false: it did not. */
  failing?: boolean | undefined;
}

/** What the dashboard and the list call expiring soon. */
export const EXPIRING_SOON_DAYS = 30;

/** The window "expiring within `days`" covers at `now`: after now, at or before now + days. */
export const expiringWindow = (now: Date, days: number): { after: Date; until: Date } => ({
  after: now,
  until: new Date(now.getTime() + days * 86_400_000),
});

/** Oldest first, by id. */
export async function listCertificates(
  ctx: Pick<DomainContext, 'db' | 'actor' | 'clock'>,
  f: CertificateFilter,
): Promise<Page<CertificateView>> {
  let q = ctx.db.selectFrom('certificates').selectAll();
  if (f.kind) q = q.where('kind', '=', f.kind);
  if (f.status) q = q.where('status', '=', f.status);
  if (f.expiring_within_days !== undefined) {
    const w = expiringWindow(ctx.clock.now(), f.expiring_within_days);
    q = q.where('not_after', '>', w.after).where('not_after', '<=', w.until);
  }
  if (f.failing !== undefined) q = q.where('last_error', f.failing ? 'is not' : 'is', null);
  const rows = await keysetRows(q, f);
  return toPage(rows, f.limit, (r) => readView(ctx.actor, r));
}

export async function getCertificate(ctx: Pick<DomainContext, 'db' | 'actor'>, id: string): Promise<CertificateView> {
  const row = await ctx.db.selectFrom('certificates').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('certificate', id);
  return readView(ctx.actor, row);
}

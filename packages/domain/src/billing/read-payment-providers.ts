import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { keysetRows, type Page, type PageRequest, toPage } from '../shared/pagination.ts';
import { openProviderSecrets, type PaymentProviderView, paymentProviderView } from './payment-provider-view.ts';

export interface PaymentProviderFilter extends PageRequest {
  kind?: string | undefined;
  enabled?: boolean | undefined;
}

type Ctx = Pick<DomainContext, 'db' | 'secrets' | 'config'>;

/** Oldest first, by id. */
export async function listPaymentProviders(ctx: Ctx, f: PaymentProviderFilter): Promise<Page<PaymentProviderView>> {
  let q = ctx.db.selectFrom('payment_providers').selectAll();
  if (f.kind !== undefined) q = q.where('kind', '=', f.kind);
  if (f.enabled !== undefined) q = q.where('enabled', '=', f.enabled);
  const rows = await keysetRows(q, f);
  return toPage(rows, f.limit, (r) => paymentProviderView(r, Object.keys(openProviderSecrets(ctx.secrets, r.secrets_enc)), ctx.config));
}

export async function getPaymentProvider(ctx: Ctx, id: string): Promise<PaymentProviderView> {
  const row = await ctx.db.selectFrom('payment_providers').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('payment provider', id);
  return paymentProviderView(row, Object.keys(openProviderSecrets(ctx.secrets, row.secrets_enc)), ctx.config);
}

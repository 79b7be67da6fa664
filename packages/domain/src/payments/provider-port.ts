import type { Db, PaymentProviderRow } from '@svc/db';
import { openProviderSecrets } from '../billing/payment-provider-view.ts';
import type { PaymentProviderPort } from '../billing/providers/port.ts';
import { NotFoundError } from '../errors.ts';
import type { DomainDeps } from '../shared/context.ts';

/**
 * The port of a stored provider, built by the vendors' factory the runtime gave (@svc/providers),
 * its secrets opened with the installation key, its calls through the outbound client. The API base URL comes from billing.api_base_urls when set (a
 * proxy, or a test's stand-in), else the adapter's own.
 */
export function providerPort(
  deps: Pick<DomainDeps, 'config' | 'secrets' | 'clock' | 'outbound' | 'vendors'>,
  row: PaymentProviderRow,
): PaymentProviderPort {
  const urls = deps.config.billing.api_base_urls as Record<string, string | undefined>;
  return deps.vendors.paymentProvider(row.kind, row.config as Record<string, unknown>, openProviderSecrets(deps.secrets, row.secrets_enc), {
    outbound: deps.outbound,
    baseUrl: urls[row.kind],
    now: () => deps.clock.now(),
  });
}

export async function providerRow(db: Db, id: string): Promise<PaymentProviderRow> {
  const row = await db.selectFrom('payment_providers').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('payment provider', id);
  return row;
}

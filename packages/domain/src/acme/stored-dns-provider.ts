import type { DnsProviderRow } from '@svc/db';
import type { DomainContext } from '../shared/context.ts';
import type { DnsProviderPort } from './dns/dns-provider-port.ts';
import { openDnsCredentials } from './dns-provider-view.ts';

/**
 * The port of a stored DNS provider, built by the vendors' factory (@svc/providers): its credentials opened, its API reached where
 * acme.dns_api_base_urls says (a proxy or a stand-in; the provider's own otherwise), every call
 * through the outbound client (the destination policy applies to the base URLs too). Signatures
 * (TSIG, SigV4) carry `now`: the wall-clock time the server checks.
 */
export function storedDnsProviderPort(
  ctx: Pick<DomainContext, 'secrets' | 'config' | 'outbound' | 'vendors'>,
  row: Pick<DnsProviderRow, 'kind' | 'credentials_enc'>,
  now: () => Date,
): DnsProviderPort {
  const bases = ctx.config.acme.dns_api_base_urls as Readonly<Record<string, string | undefined>>;
  return ctx.vendors.dnsProvider(row.kind, openDnsCredentials(ctx.secrets, row.credentials_enc), {
    now,
    outbound: ctx.outbound,
    apiBase: bases[row.kind],
  });
}

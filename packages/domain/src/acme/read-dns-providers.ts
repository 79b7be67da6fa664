import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { keysetRows, type Page, type PageRequest, toPage } from '../shared/pagination.ts';
import { type DnsProviderView, dnsProviderView, openDnsCredentials } from './dns-provider-view.ts';

export interface DnsProviderFilter extends PageRequest {
  kind?: string | undefined;
}

type Ctx = Pick<DomainContext, 'db' | 'secrets'>;

/** Oldest first, by id. */
export async function listDnsProviders(ctx: Ctx, f: DnsProviderFilter): Promise<Page<DnsProviderView>> {
  let q = ctx.db.selectFrom('dns_providers').selectAll();
  if (f.kind !== undefined) q = q.where('kind', '=', f.kind);
  const rows = await keysetRows(q, f);
  return toPage(rows, f.limit, (r) => dnsProviderView(r, Object.keys(openDnsCredentials(ctx.secrets, r.credentials_enc))));
}

export async function getDnsProvider(ctx: Ctx, id: string): Promise<DnsProviderView> {
  const row = await ctx.db.selectFrom('dns_providers').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('DNS provider', id);
  return dnsProviderView(row, Object.keys(openDnsCredentials(ctx.secrets, row.credentials_enc)));
}

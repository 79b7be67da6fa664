import { z } from 'zod';
import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { isEmptyPatch } from '../shared/input.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { checkDnsCredentials, DnsCredentials, DnsProviderName } from './dns-provider-fields.ts';
import { dnsProviderKind } from './dns-provider-kinds.ts';
import { type DnsProviderView, dnsProviderView, openDnsCredentials } from './dns-provider-view.ts';
import { getDnsProvider } from './read-dns-providers.ts';

/** PATCH /dns-providers/{id}: a merge; the kind is fixed, so it is not a field. */
export const UpdateDnsProviderInput = z
  .object({
    name: DnsProviderName.optional(),
    credentials: DnsCredentials.optional().meta({ description: 'replaces the whole set (checked against the kind)' }),
  })
  .strict()
  .brand<'UpdateDnsProviderInput'>();
export type UpdateDnsProviderInput = z.output<typeof UpdateDnsProviderInput>;

/**
 * PATCH merge of name and credentials; the kind is fixed at creation, so a new credential set
 * is checked here against the stored kind.
 */
export async function updateDnsProvider(ctx: DomainContext, id: string, input: UpdateDnsProviderInput): Promise<DnsProviderView> {
  if (isEmptyPatch(input)) return getDnsProvider(ctx, id);
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const current = await trx.selectFrom('dns_providers').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!current) throw new NotFoundError('DNS provider', id);
    const credentials = input.credentials !== undefined ? checkDnsCredentials(dnsProviderKind(current.kind), input.credentials) : undefined;
    const now = ctx.clock.now();
    const row = await trx
      .updateTable('dns_providers')
      .set({
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(credentials !== undefined ? { credentials_enc: ctx.secrets.seal(JSON.stringify(credentials)) } : {}),
        updated_at: now,
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const names = Object.keys(credentials ?? openDnsCredentials(ctx.secrets, row.credentials_enc)).sort();
    const changed = Object.keys(input).filter((k) => input[k as keyof UpdateDnsProviderInput] !== undefined);
    uow.audit({
      action: 'dns_provider.updated',
      entity_type: 'dns_provider',
      entity_id: id,
      details: { changed, ...(credentials !== undefined ? { credentials_set: names } : {}) },
    });
    return dnsProviderView(row, names);
  });
}

import { z } from 'zod';
import type { DomainContext } from '../shared/context.ts';
import { newId } from '../shared/ids.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { DnsCredentials, DnsKind, DnsProviderName, dnsCredentialErrors } from './dns-provider-fields.ts';
import { DNS_PROVIDER_KINDS } from './dns-provider-kinds.ts';
import { type DnsProviderView, dnsProviderView } from './dns-provider-view.ts';

/** POST /dns-providers: the kind is in the body, so its credential set is checked here. */
export const CreateDnsProviderInput = z
  .object({ kind: DnsKind, name: DnsProviderName, credentials: DnsCredentials })
  .strict()
  .superRefine((input, ctx) => {
    for (const [name, reason] of Object.entries(dnsCredentialErrors(DNS_PROVIDER_KINDS[input.kind], input.credentials)))
      ctx.addIssue({ code: 'custom', path: ['credentials', name], message: reason });
  })
  .brand<'CreateDnsProviderInput'>();
export type CreateDnsProviderInput = z.output<typeof CreateDnsProviderInput>;

export async function createDnsProvider(ctx: DomainContext, input: CreateDnsProviderInput): Promise<DnsProviderView> {
  const { kind, name, credentials } = input;
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const now = ctx.clock.now();
    const row = await trx
      .insertInto('dns_providers')
      .values({
        id: newId('dns', now.getTime()),
        kind,
        name,
        credentials_enc: ctx.secrets.seal(JSON.stringify(credentials)),
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const names = Object.keys(credentials).sort();
    uow.audit({
      action: 'dns_provider.created',
      entity_type: 'dns_provider',
      entity_id: row.id,
      details: { kind, name: row.name, credentials_set: names },
    });
    return dnsProviderView(row, names);
  });
}

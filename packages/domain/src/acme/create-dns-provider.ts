import type { DomainContext } from '../shared/context.ts';
import { newId } from '../shared/ids.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { dnsProviderKind } from './dns-provider-kinds.ts';
import { checkDnsCredentials, type DnsProviderView, dnsProviderView } from './dns-provider-view.ts';

export interface CreateDnsProviderInput {
  kind: string;
  name: string;
  credentials: Record<string, unknown>;
}

export async function createDnsProvider(ctx: DomainContext, input: CreateDnsProviderInput): Promise<DnsProviderView> {
  const kind = dnsProviderKind(input.kind);
  const credentials = checkDnsCredentials(kind, input.credentials);
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const now = ctx.clock.now();
    const row = await trx
      .insertInto('dns_providers')
      .values({
        id: newId('dns', now.getTime()),
        kind: kind.kind,
        name: input.name.trim(),
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
      details: { kind: kind.kind, name: row.name, credentials_set: names },
    });
    return dnsProviderView(row, names);
  });
}

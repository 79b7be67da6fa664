import { type DomainDeps, newId } from '@svc/domain';

/**
 * A certificate of kind acme that names an ACME account or a DNS provider. Inserted as a row:
 * no use case issues ACME certificates yet (createCertificate refuses the kind until the
 * ACME issue), and these tests only need something that refers to the account or provider.
 */
export async function acmeCertificate(
  deps: Pick<DomainDeps, 'db' | 'clock'>,
  refs: { acme_account_id?: string; dns_provider_id?: string },
): Promise<string> {
  const t = deps.clock.now();
  const id = newId('crt', t.getTime());
  await deps.db
    .insertInto('certificates')
    .values({
      id,
      name: null,
      kind: 'acme',
      domains: JSON.stringify(['example.com']),
      cert_pem: null,
      key_pem_enc: null,
      issuer: null,
      not_before: null,
      not_after: null,
      acme_account_id: refs.acme_account_id ?? null,
      dns_provider_id: refs.dns_provider_id ?? null,
      last_error: null,
      created_at: t,
      updated_at: t,
    })
    .execute();
  return id;
}

import { z } from 'zod';
import type { DomainContext } from '../shared/context.ts';
import { newId } from '../shared/ids.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { type CertificateView, certificateView } from './certificate.ts';
import { AcmeDomains, CertificateName, CertPem, Domains, KeyPem } from './certificate-fields.ts';
import { parseCertificateMaterial } from './pem.ts';
import { requestAcmeCertificate } from './request-acme-certificate.ts';

const Id = z.string().min(1).max(64);

/** POST /certificates: uploaded material, or an ACME certificate issued by the worker. */
export const CreateCertificateInput = z
  .object({
    name: CertificateName.nullable().optional(),
    kind: z.enum(['uploaded', 'acme']).meta({
      description:
        'uploaded: cert_pem and key_pem required (domains optional). acme: acme_account_id, dns_provider_id and domains required; the worker issues it over DNS-01 (status pending, then issued or failed) and renews it 30 days before expiry',
    }),
    cert_pem: CertPem.optional(),
    key_pem: KeyPem.optional(),
    domains: z
      .array(z.string())
      .max(100)
      .optional()
      .meta({ description: `${Domains.description ?? ''}; ${AcmeDomains.description ?? ''}` }),
    acme_account_id: Id.optional().meta({ description: 'kind acme: the ACME account (POST /acme-accounts) that orders it' }),
    dns_provider_id: Id.optional().meta({ description: 'kind acme: the DNS provider that publishes the DNS-01 TXT values' }),
  })
  .strict()
  .superRefine((c, ctx) => {
    const required =
      c.kind === 'uploaded' ? (['cert_pem', 'key_pem'] as const) : (['acme_account_id', 'dns_provider_id', 'domains'] as const);
    const refused = c.kind === 'uploaded' ? (['acme_account_id', 'dns_provider_id'] as const) : (['cert_pem', 'key_pem'] as const);
    for (const field of required)
      if (c[field] === undefined) ctx.addIssue({ code: 'custom', message: `required for kind ${c.kind}`, path: [field] });
    for (const field of refused)
      if (c[field] !== undefined) ctx.addIssue({ code: 'custom', message: `not for kind ${c.kind}`, path: [field] });
    const domains = (c.kind === 'uploaded' ? Domains : AcmeDomains).safeParse(c.domains ?? (c.kind === 'uploaded' ? undefined : []));
    if (c.domains !== undefined && !domains.success)
      for (const issue of domains.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: ['domains', ...issue.path] });
  })
  .transform((c) => ({ ...c, domains: c.domains && c.kind === 'acme' ? AcmeDomains.parse(c.domains) : c.domains }))
  .brand<'CreateCertificateInput'>();
export type CreateCertificateInput = z.output<typeof CreateCertificateInput>;

/**
 * Uploaded material: parsed, key checked against the leaf, chain built, key sealed. No profile
 * uses a new certificate yet: no revision moves. Kind acme: requestAcmeCertificate.
 */
export async function createCertificate(ctx: DomainContext, input: CreateCertificateInput): Promise<CertificateView> {
  if (input.kind === 'acme')
    // The schema requires the three for kind acme.
    return requestAcmeCertificate(ctx, {
      name: input.name ?? null,
      domains: input.domains as string[],
      acme_account_id: input.acme_account_id as string,
      dns_provider_id: input.dns_provider_id as string,
    });
  // The schema requires both halves for kind uploaded.
  const parsed = parseCertificateMaterial(input.cert_pem as string, input.key_pem as string, input.domains, { now: ctx.clock.now() });
  const name = input.name ?? null;
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const now = ctx.clock.now();
    const row = await trx
      .insertInto('certificates')
      .values({
        id: newId('crt', now.getTime()),
        name,
        kind: 'uploaded',
        status: 'active',
        domains: JSON.stringify(parsed.domains),
        cert_pem: parsed.certPem,
        key_pem_enc: ctx.secrets.seal(parsed.keyPem),
        issuer: parsed.issuer,
        not_before: parsed.notBefore,
        not_after: parsed.notAfter,
        acme_account_id: null,
        dns_provider_id: null,
        last_error: null,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    uow.audit({
      action: 'certificate.created',
      entity_type: 'certificate',
      entity_id: row.id,
      details: { name, kind: row.kind, domains: parsed.domains, not_after: parsed.notAfter.toISOString() },
    });
    return certificateView(row);
  });
}

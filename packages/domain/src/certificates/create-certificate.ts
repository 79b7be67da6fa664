import { z } from 'zod';
import { DomainError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { newId } from '../shared/ids.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { type CertificateView, certificateView } from './certificate.ts';
import { CertificateName, CertPem, Domains, KeyPem } from './certificate-fields.ts';
import { parseCertificateMaterial } from './pem.ts';

/** POST /certificates, fixtures: uploaded material (ACME issuance is refused for now, by the use case). */
export const CreateCertificateInput = z
  .object({
    name: CertificateName.nullable().optional(),
    kind: z.enum(['uploaded', 'acme']).meta({
      description: 'uploaded: cert_pem and key_pem required. acme: refused for now (issuance comes in a later version)',
    }),
    cert_pem: CertPem.optional(),
    key_pem: KeyPem.optional(),
    domains: Domains.optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.kind !== 'uploaded') return;
    for (const field of ['cert_pem', 'key_pem'] as const)
      if (c[field] === undefined) ctx.addIssue({ code: 'custom', message: 'required for kind uploaded', path: [field] });
  })
  .brand<'CreateCertificateInput'>();
export type CreateCertificateInput = z.output<typeof CreateCertificateInput>;

export const ACME_NOT_AVAILABLE = 'ACME issuance is not available in this version';

/** Uploaded material: parsed, key checked against the leaf, key sealed. No profile uses it yet: no revision moves. */
export async function createCertificate(ctx: DomainContext, input: CreateCertificateInput): Promise<CertificateView> {
  if (input.kind === 'acme') throw new DomainError('validation', ACME_NOT_AVAILABLE, { kind: ACME_NOT_AVAILABLE });
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

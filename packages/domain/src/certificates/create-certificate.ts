import { DomainError, ValidationError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { newId } from '../shared/ids.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { type CertificateView, certificateView, normalizeCertificateName } from './certificate.ts';
import { parseCertificateMaterial } from './pem.ts';

export interface CreateCertificateInput {
  name?: string | null | undefined;
  kind: 'uploaded' | 'acme';
  cert_pem?: string | undefined;
  key_pem?: string | undefined;
  domains?: string[] | undefined;
}

export const ACME_NOT_AVAILABLE = 'ACME issuance is not available in this version';

/** Uploaded material: parsed, key checked against the leaf, key sealed. No profile uses it yet: no revision moves. */
export async function createCertificate(ctx: DomainContext, input: CreateCertificateInput): Promise<CertificateView> {
  if (input.kind === 'acme') throw new DomainError('validation', ACME_NOT_AVAILABLE, { kind: ACME_NOT_AVAILABLE });
  const missing: Record<string, string> = {};
  if (!input.cert_pem) missing.cert_pem = 'required for kind uploaded';
  if (!input.key_pem) missing.key_pem = 'required for kind uploaded';
  if (Object.keys(missing).length > 0) throw new ValidationError('missing certificate material', missing);
  const parsed = parseCertificateMaterial(input.cert_pem as string, input.key_pem as string, input.domains);
  const name = normalizeCertificateName(input.name) ?? null;
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

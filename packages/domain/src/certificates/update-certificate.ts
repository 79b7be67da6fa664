import { z } from 'zod';
import { NotFoundError, ValidationError } from '../errors.ts';
import { bumpNodeRevisions, nodesOfCertificate } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { isEmptyPatch } from '../shared/input.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { type CertificateView, certificateView } from './certificate.ts';
import { CertificateName, CertPem, Domains, KeyPem } from './certificate-fields.ts';
import { type ParsedCertificate, parseCertificateMaterial } from './pem.ts';
import { getCertificate } from './read-certificates.ts';

/**
 * PATCH /certificates/{id}: a merge. `name` null or empty clears; cert_pem and key_pem come
 * together (replacement material); `domains` must be covered by the certificate, and are
 * re-derived from new material when omitted.
 */
export const UpdateCertificateInput = z
  .object({
    name: CertificateName.nullable().optional(),
    cert_pem: CertPem.optional().meta({ description: 'new material: send with key_pem' }),
    key_pem: KeyPem.optional(),
    domains: Domains.optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    if ((c.cert_pem === undefined) !== (c.key_pem === undefined))
      ctx.addIssue({
        code: 'custom',
        message: 'required together with the other half of the material',
        path: [c.cert_pem === undefined ? 'cert_pem' : 'key_pem'],
      });
  })
  .brand<'UpdateCertificateInput'>();
export type UpdateCertificateInput = z.output<typeof UpdateCertificateInput>;

/**
 * PATCH merge. New material (cert_pem + key_pem) replaces the old one, and every node serving
 * TLS with this certificate gets a new revision.
 */
export async function updateCertificate(ctx: DomainContext, id: string, input: UpdateCertificateInput): Promise<CertificateView> {
  if (isEmptyPatch(input)) return getCertificate(ctx, id);
  // The schema lets the halves of the material come only together.
  const parsed: ParsedCertificate | undefined =
    input.cert_pem !== undefined && input.key_pem !== undefined
      ? parseCertificateMaterial(input.cert_pem, input.key_pem, input.domains, { now: ctx.clock.now() })
      : undefined;
  const { name } = input;
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const current = await trx.selectFrom('certificates').selectAll().where('id', '=', id).forNoKeyUpdate().executeTakeFirst();
    if (!current) throw new NotFoundError('certificate', id);
    let domains = parsed?.domains;
    if (!parsed && input.domains !== undefined) {
      // New names for the stored material: checked against it (its key is sealed; only the certificate is needed).
      if (!current.cert_pem) throw new ValidationError('no material', { domains: 'the certificate has no material yet' });
      domains = checkDomainsAgainst(current.cert_pem, input.domains, ctx, current.key_pem_enc);
    }
    const row = await trx
      .updateTable('certificates')
      .set({
        ...(name !== undefined ? { name } : {}),
        ...(domains !== undefined ? { domains: JSON.stringify(domains) } : {}),
        ...(parsed
          ? {
              cert_pem: parsed.certPem,
              key_pem_enc: ctx.secrets.seal(parsed.keyPem),
              issuer: parsed.issuer,
              not_before: parsed.notBefore,
              not_after: parsed.notAfter,
              status: 'active',
              last_error: null,
            }
          : {}),
        updated_at: ctx.clock.now(),
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const nodes = parsed ? await bumpNodeRevisions(uow, await nodesOfCertificate(trx, id)) : [];
    const changed = Object.keys(input).filter((k) => input[k as keyof UpdateCertificateInput] !== undefined);
    uow.audit({
      action: 'certificate.updated',
      entity_type: 'certificate',
      entity_id: id,
      details: {
        changed,
        ...(parsed ? { material_replaced: true, not_after: parsed.notAfter.toISOString() } : {}),
        ...(domains !== undefined ? { domains } : {}),
        ...(nodes.length > 0 ? { nodes_bumped: nodes } : {}),
      },
    });
    return certificateView(row);
  });
}

function checkDomainsAgainst(certPem: string, domains: string[], ctx: DomainContext, keyEnc: string | null): string[] {
  if (keyEnc === null) throw new ValidationError('no key', { domains: 'the certificate has no key yet' });
  return parseCertificateMaterial(certPem, ctx.secrets.open(keyEnc), domains).domains;
}

import { NotFoundError, ValidationError } from '../errors.ts';
import { bumpNodeRevisions, nodesOfCertificate } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { type CertificateView, certificateView, normalizeCertificateName } from './certificate.ts';
import { type ParsedCertificate, parseCertificateMaterial } from './pem.ts';

export interface UpdateCertificateInput {
  /** null or empty clears. */
  name?: string | null | undefined;
  /** Replacement material: cert_pem and key_pem together. */
  cert_pem?: string | undefined;
  key_pem?: string | undefined;
  /** Names shown for the certificate; must be covered by it. Re-derived from new material when omitted. */
  domains?: string[] | undefined;
}

/**
 * PATCH merge. New material (cert_pem + key_pem) replaces the old one, and every node serving
 * TLS with this certificate gets a new revision.
 */
export async function updateCertificate(ctx: DomainContext, id: string, input: UpdateCertificateInput): Promise<CertificateView> {
  const hasCert = input.cert_pem !== undefined;
  const hasKey = input.key_pem !== undefined;
  if (hasCert !== hasKey)
    throw new ValidationError('send cert_pem and key_pem together', {
      [hasCert ? 'key_pem' : 'cert_pem']: 'required together with the other half of the material',
    });
  let parsed: ParsedCertificate | undefined;
  if (hasCert) parsed = parseCertificateMaterial(input.cert_pem as string, input.key_pem as string, input.domains);
  const name = normalizeCertificateName(input.name);
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

import { z } from 'zod';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import { bumpNodeRevisions, nodesOfCertificate } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { isEmptyPatch } from '../shared/input.ts';
import { JOBS } from '../shared/jobs.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { type CertificateView, certificateView } from './certificate.ts';
import { AcmeDomains, CertificateName, CertPem, Domains, KeyPem } from './certificate-fields.ts';
import { rollOutCertificate } from './certificate-rollouts.ts';
import { type ParsedCertificate, parseCertificateMaterial } from './pem.ts';
import { getCertificate } from './read-certificates.ts';
import { issueJobId } from './request-acme-certificate.ts';

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
    domains: Domains.optional().meta({
      description: 'uploaded: names the material covers; acme: new names, issued again at once (the old material serves meanwhile)',
    }),
    acme_account_id: z.string().min(1).max(64).optional().meta({ description: 'acme only: another ACME account, from the next attempt' }),
    dns_provider_id: z.string().min(1).max(64).optional().meta({ description: 'acme only: another DNS provider, from the next attempt' }),
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
  const kind = (await ctx.db.selectFrom('certificates').select('kind').where('id', '=', id).executeTakeFirst())?.kind;
  if (kind === undefined) throw new NotFoundError('certificate', id);
  if (kind === 'acme') return updateAcmeCertificate(ctx, id, input);
  if (input.acme_account_id !== undefined || input.dns_provider_id !== undefined)
    throw new ValidationError('invalid certificate', {
      [input.acme_account_id !== undefined ? 'acme_account_id' : 'dns_provider_id']: 'only for kind acme',
    });
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
    if (parsed) await rollOutCertificate(uow, id, nodes, parsed.notAfter, ctx.clock.now());
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

/**
 * PATCH of an ACME certificate: the material is the CA's (cert_pem/key_pem: 409); new names,
 * another account or DNS provider are stored, and new names are issued at once (the old
 * material serves until the new one comes).
 */
async function updateAcmeCertificate(ctx: DomainContext, id: string, input: UpdateCertificateInput): Promise<CertificateView> {
  if (input.cert_pem !== undefined)
    throw new ConflictError('the material of an ACME certificate comes from its CA: POST /certificates/{id}/renew', {
      cert_pem: 'not for kind acme',
    });
  const domains = input.domains === undefined ? undefined : AcmeDomains.safeParse(input.domains);
  if (domains && !domains.success)
    throw new ValidationError('invalid certificate', { domains: domains.error.issues[0]?.message ?? 'invalid' });
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const errors: Record<string, string> = {};
    if (
      input.acme_account_id !== undefined &&
      !(await trx.selectFrom('acme_accounts').select('id').where('id', '=', input.acme_account_id).executeTakeFirst())
    )
      errors.acme_account_id = 'no such ACME account';
    if (
      input.dns_provider_id !== undefined &&
      !(await trx.selectFrom('dns_providers').select('id').where('id', '=', input.dns_provider_id).executeTakeFirst())
    )
      errors.dns_provider_id = 'no such DNS provider';
    if (Object.keys(errors).length > 0) throw new ValidationError('invalid certificate', errors);
    const now = ctx.clock.now();
    const current = await trx.selectFrom('certificates').select('domains').where('id', '=', id).forNoKeyUpdate().executeTakeFirstOrThrow();
    const newNames =
      domains?.success === true && JSON.stringify(domains.data) !== JSON.stringify(current.domains) ? domains.data : undefined;
    const row = await trx
      .updateTable('certificates')
      .set({
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.acme_account_id !== undefined ? { acme_account_id: input.acme_account_id } : {}),
        ...(input.dns_provider_id !== undefined ? { dns_provider_id: input.dns_provider_id } : {}),
        ...(newNames ? { domains: JSON.stringify(newNames), renew_requested_at: now, next_attempt_at: now } : {}),
        updated_at: now,
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const changed = Object.keys(input).filter((k) => input[k as keyof UpdateCertificateInput] !== undefined);
    uow.audit({
      action: 'certificate.updated',
      entity_type: 'certificate',
      entity_id: id,
      details: { changed, ...(newNames ? { domains: newNames, reissue: true } : {}) },
    });
    if (newNames) uow.enqueue(JOBS.certificatesIssue, { id }, { id: issueJobId(id, now) });
    return certificateView(row);
  });
}

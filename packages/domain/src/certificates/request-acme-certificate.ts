import { ValidationError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { newId } from '../shared/ids.ts';
import { JOBS } from '../shared/jobs.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { type CertificateView, certificateView } from './certificate.ts';

export interface AcmeCertificateRequest {
  name: string | null;
  domains: string[];
  acme_account_id: string;
  dns_provider_id: string;
}

/**
 * The job id of one due attempt (the certificate and when it fell due): the sweep asking again
 * for the same attempt adds nothing, and an attempt whose job failed is not blocked by it.
 */
export const issueJobId = (certificateId: string, dueAt: Date) => `${certificateId}.${dueAt.getTime()}`;

/**
 * POST /certificates kind acme: the certificate is recorded `pending`, due now, and the
 * worker's `certificates.issue` job orders it after commit (issueAcmeCertificate). The account
 * and the DNS provider must exist; the account need not be registered yet (issuance registers it).
 */
export async function requestAcmeCertificate(ctx: DomainContext, req: AcmeCertificateRequest): Promise<CertificateView> {
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const errors: Record<string, string> = {};
    const account = await trx.selectFrom('acme_accounts').select('id').where('id', '=', req.acme_account_id).executeTakeFirst();
    if (!account) errors.acme_account_id = 'no such ACME account';
    const provider = await trx.selectFrom('dns_providers').select('id').where('id', '=', req.dns_provider_id).executeTakeFirst();
    if (!provider) errors.dns_provider_id = 'no such DNS provider';
    if (Object.keys(errors).length > 0) throw new ValidationError('invalid certificate', errors);
    const now = ctx.clock.now();
    const row = await trx
      .insertInto('certificates')
      .values({
        id: newId('crt', now.getTime()),
        name: req.name,
        kind: 'acme',
        status: 'pending',
        domains: JSON.stringify(req.domains),
        cert_pem: null,
        key_pem_enc: null,
        issuer: null,
        not_before: null,
        not_after: null,
        acme_account_id: req.acme_account_id,
        dns_provider_id: req.dns_provider_id,
        last_error: null,
        next_attempt_at: now,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    uow.audit({
      action: 'certificate.created',
      entity_type: 'certificate',
      entity_id: row.id,
      details: {
        name: req.name,
        kind: 'acme',
        domains: req.domains,
        acme_account_id: req.acme_account_id,
        dns_provider_id: req.dns_provider_id,
      },
    });
    uow.enqueue(JOBS.certificatesIssue, { id: row.id }, { id: issueJobId(row.id, now) });
    return certificateView(row);
  });
}

import { ConflictError, NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { JOBS } from '../shared/jobs.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { type CertificateView, certificateView } from './certificate.ts';
import { issueJobId } from './request-acme-certificate.ts';

/**
 * POST /certificates/{id}/renew: a forced renewal (or a retry of a failed issuance now, without
 * waiting for its backoff). The attempt is the worker's; the answer is the certificate as it is
 * (202). Asked for while an attempt runs, it is owed after that one. Uploaded certificates are
 * renewed by uploading new material (PATCH): 409.
 */
export async function renewCertificate(ctx: DomainContext, id: string): Promise<CertificateView> {
  return unitOfWork(ctx, async (uow) => {
    const now = ctx.clock.now();
    const current = await uow.db.selectFrom('certificates').select(['kind']).where('id', '=', id).forUpdate().executeTakeFirst();
    if (!current) throw new NotFoundError('certificate', id);
    if (current.kind !== 'acme')
      throw new ConflictError('an uploaded certificate is renewed by uploading new material (PATCH cert_pem and key_pem)', {
        kind: 'must be acme',
      });
    const row = await uow.db
      .updateTable('certificates')
      .set({ renew_requested_at: now, next_attempt_at: now, updated_at: now })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    uow.audit({ action: 'certificate.renewal_requested', entity_type: 'certificate', entity_id: id, details: { domains: row.domains } });
    uow.enqueue(JOBS.certificatesIssue, { id }, { id: issueJobId(id, now) });
    return certificateView(row);
  });
}

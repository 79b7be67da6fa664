import type { DomainContext } from '../shared/context.ts';
import { JOBS } from '../shared/jobs.ts';
import { dueForIssuance } from './issuance-due.ts';
import { issueJobId } from './request-acme-certificate.ts';

/**
 * Part of the worker's `certificates.sweep`: every ACME certificate whose next attempt is due
 * (a renewal 30 days before expiry, a retry after its backoff, an issuance whose job was lost,
 * an attempt whose worker died) is handed to `certificates.issue`. The job claims before it
 * acts, so handing one over twice is harmless.
 */
export async function enqueueDueIssuance(ctx: Pick<DomainContext, 'db' | 'clock' | 'jobs' | 'config'>, limit = 100): Promise<number> {
  const now = ctx.clock.now();
  const due = await ctx.db
    .selectFrom('certificates')
    .select(['id', 'next_attempt_at'])
    .where(dueForIssuance(now, ctx.config.acme.propagation_timeout_seconds))
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
  for (const c of due) await ctx.jobs.enqueue(JOBS.certificatesIssue, { id: c.id }, { id: issueJobId(c.id, c.next_attempt_at as Date) });
  return due.length;
}

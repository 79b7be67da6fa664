import type { Kysely } from 'kysely';

// ACME issuance and renewal by the worker (issue 16 item 3, docs/certificates.md):
// - issuing_since: the claim of the worker issuing now (a claim older than 15 minutes is taken over);
// - next_attempt_at: when the sweep starts the next attempt (the first issuance, a retry after a
//   failure with backoff, or the renewal 30 days before expiry);
// - renew_requested_at: POST /certificates/{id}/renew, cleared by the attempt that saw it;
// - failed_attempts, last_attempt_at: how the last attempts went (last_error says why).
// (A handful of rows per installation: no index.) Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('certificates')
    .addColumn('issuing_since', 'timestamptz')
    .addColumn('next_attempt_at', 'timestamptz')
    .addColumn('renew_requested_at', 'timestamptz')
    .addColumn('failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_attempt_at', 'timestamptz')
    .execute();
}

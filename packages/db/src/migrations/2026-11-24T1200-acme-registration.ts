import type { Kysely } from 'kysely';

// ACME accounts registered with their CA by the worker (issue 16, docs/certificates.md): the
// External Account Binding sealed until the registration used it, the last registration error
// in words, and when the CA took the account. Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('acme_accounts')
    .addColumn('eab_enc', 'text')
    .addColumn('registration_error', 'text')
    .addColumn('registered_at', 'timestamptz')
    .execute();
}

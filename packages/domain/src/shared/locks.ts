import type { Db } from '@svc/db';
import { sql } from 'kysely';

/** Serialises transactions that must not run side by side (first key, setup, last owner). */
export async function advisoryXactLock(trx: Db, name: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${name}))`.execute(trx);
}

import type { Db } from '@svc/db';
import { sql } from 'kysely';

/**
 * Locks these node rows in id order, inside the caller's transaction. Every statement that
 * writes many node rows at once (a revision bump reaching 10,000 nodes, the gateway's batched
 * ApplyResults and StatusReports) takes its locks through this first: all of them in one global
 * order, so two of them can wait for each other but never deadlock. An UPDATE over many rows
 * locks them in the order its plan visits them (a sequential or bitmap scan: the table's
 * order), whatever order its id list was in; a fan-out to 10,000 nodes met the batched
 * ApplyResults of the previous change that way and the admin's request failed (issue 17.2).
 */
export async function lockNodesInOrder(trx: Db, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await trx
    .selectFrom('nodes')
    .select('id')
    .where(sql<boolean>`id = any(${[...ids]}::text[])`)
    .orderBy('id')
    .forUpdate()
    .execute();
}

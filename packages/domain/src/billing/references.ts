import type { Db } from '@svc/db';
import type { Kysely } from 'kysely';
import { ConflictError } from '../errors.ts';

export { isForeignKeyViolation } from '../shared/db-errors.ts';

/** At most this many blocking ids are listed in a 409 (the message gives the count). */
export const BLOCKED_BY_MAX = 100;

export interface Blockers {
  /** Entity type, plural (`payments`), to the first ids that block. */
  ids: Record<string, string[]>;
  /** Entity type, plural, to how many rows block. */
  counts: Record<string, number>;
}

/** The referential-rule refusal: 409 naming what blocks, `blocked_by: {<type plural>: [ids]}`. */
export function blockedError(what: string, b: Blockers, hint = ''): ConflictError {
  const named = Object.entries(b.counts)
    .filter(([, n]) => n > 0)
    .map(([type, n]) => `${n} ${n === 1 ? type.replace(/s$/, '') : type}`)
    .join(' and ');
  const blockedBy = Object.fromEntries(Object.entries(b.ids).filter(([, ids]) => ids.length > 0));
  return new ConflictError(`${what} is still referenced by ${named}${hint ? `; ${hint}` : ''}`, undefined, { blocked_by: blockedBy });
}

export const hasBlockers = (b: Blockers): boolean => Object.values(b.counts).some((n) => n > 0);

/** Ids (first BLOCKED_BY_MAX, ascending) and count of `table` rows whose `column` is `value`. */
export async function referencingRows(
  trx: Db,
  table: 'payments' | 'subscriptions' | 'certificates',
  column: string,
  value: string,
): Promise<{ ids: string[]; count: number }> {
  const db = trx as unknown as Kysely<any>;
  const rows: Array<{ id: string }> = await db
    .selectFrom(table)
    .select('id')
    .where(column, '=', value)
    .orderBy('id')
    .limit(BLOCKED_BY_MAX + 1)
    .execute();
  if (rows.length <= BLOCKED_BY_MAX) return { ids: rows.map((r) => r.id), count: rows.length };
  const n = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(column, '=', value)
    .executeTakeFirstOrThrow();
  return { ids: rows.slice(0, BLOCKED_BY_MAX).map((r) => r.id), count: Number(n.n) };
}

/** Collects the rows that block deleting one record, by entity type (plural). */
export async function collectBlockers(
  trx: Db,
  value: string,
  refs: ReadonlyArray<{ table: 'payments' | 'subscriptions' | 'certificates'; column: string }>,
): Promise<Blockers> {
  const b: Blockers = { ids: {}, counts: {} };
  for (const r of refs) {
    const found = await referencingRows(trx, r.table, r.column, value);
    b.ids[r.table] = found.ids;
    b.counts[r.table] = found.count;
  }
  return b;
}

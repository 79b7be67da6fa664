import { type SelectQueryBuilder, sql } from 'kysely';
import { ValidationError } from '../errors.ts';

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export interface PageRequest {
  limit: number;
  cursor?: string | undefined;
}

export const PAGE_LIMIT_DEFAULT = 50;
export const PAGE_LIMIT_MAX = 200;

/**
 * Keyset cursors: the opaque cursor is the last item's id (ids are unique and
 * time-sortable), so a page never repeats or skips existing rows when rows are inserted
 * between requests. The `v` member lets the format evolve.
 */
export function encodeCursor(lastId: string): string {
  return Buffer.from(JSON.stringify({ v: 1, after: lastId })).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { v?: unknown; after?: unknown };
    if (parsed.v === 1 && typeof parsed.after === 'string' && parsed.after.length > 0) return parsed.after;
  } catch {
    // fall through
  }
  throw new ValidationError('the cursor is not one this API issued', { cursor: 'invalid cursor' });
}

/** Turns `limit + 1` fetched rows into a page. */
export function toPage<R extends { id: string }, T>(rows: R[], limit: number, map: (r: R) => T): Page<T> {
  const more = rows.length > limit;
  const slice = more ? rows.slice(0, limit) : rows;
  const last = slice[slice.length - 1];
  return { items: slice.map(map), next_cursor: more && last ? encodeCursor(last.id) : null };
}

/**
 * One keyset page of a list query: the rows after the cursor's id in id order (oldest first;
 * `newest` for newest first), one more than the limit so toPage knows whether another page
 * exists. `column` names the id where the query joins (`g.id`).
 */
export function keysetRows<DB, TB extends keyof DB, O extends { id: string }>(
  query: SelectQueryBuilder<DB, TB, O>,
  page: PageRequest,
  opts: { column?: string; newest?: boolean } = {},
): Promise<O[]> {
  const after = decodeCursor(page.cursor);
  const id = sql.ref<string>(opts.column ?? 'id');
  const direction = opts.newest ? 'desc' : 'asc';
  const q = after ? query.where(id, opts.newest ? '<' : '>', after) : query;
  return q
    .orderBy(id, direction)
    .limit(page.limit + 1)
    .execute();
}

import { CompiledQuery, type Kysely, type RawBuilder, type SelectQueryBuilder, sql } from 'kysely';
import { ValidationError } from '../errors.ts';
import type { Page, PageRequest } from './pagination.ts';

/**
 * Server-side lists (issue 30 item 6): a free-text `q`, a sort, keyset pages in that sort,
 * and the total on the first page, exact up to COUNT_EXACT_UP_TO and the planner's estimate
 * beyond (labelled by `total_exact`).
 */
export interface ListRequest extends PageRequest {
  /** A sort key of the list; `-key` for descending. */
  sort?: string | undefined;
  q?: string | undefined;
}

export interface ListPage<T> extends Page<T> {
  /** Rows matching the filters, on the first page (no cursor); null on later pages. */
  total: number | null;
  /** Whether `total` was counted (true) or estimated by the planner (false). */
  total_exact: boolean | null;
}

/** Counting stops here; past it the total is the query planner's estimate. */
export const COUNT_EXACT_UP_TO = 10_000;

/** The type a sort key's value has in the database: the cursor carries it as text. */
export type SortKind = 'text' | 'timestamptz' | 'bigint';

export interface SortKey {
  expr: RawBuilder<unknown>;
  kind: SortKind;
}

export interface ListSpec {
  /** The id column as the query names it (`payments.id` where it joins). */
  idColumn: string;
  /** Sort keys by name; `created` (the time-ordered id) is always one. */
  sorts: Record<string, SortKey>;
  /** `created` or `-created` (the audit log: newest first). */
  defaultSort: string;
}

interface Sort {
  name: string;
  desc: boolean;
}

/** The list's sort from `sort`, or a 400 naming the keys it has. */
export function parseSort(sort: string | undefined, spec: ListSpec): Sort {
  const raw = sort === undefined || sort === '' ? spec.defaultSort : sort;
  const desc = raw.startsWith('-');
  const name = desc ? raw.slice(1) : raw;
  if (name !== 'created' && !(name in spec.sorts)) {
    const keys = ['created', ...Object.keys(spec.sorts)];
    throw new ValidationError('this list cannot be sorted that way', { sort: `one of ${keys.join(', ')}, or - before one for descending` });
  }
  return { name, desc };
}

const sortName = (s: Sort) => (s.desc ? `-${s.name}` : s.name);

interface Position {
  after: string;
  key: string | null;
}

/**
 * The cursor of a sorted page: the sort it belongs to, the last row's sort value and id.
 * Version 1 cursors (the last id alone) are the default sort's, as every list issued before
 * sorting existed; the default sort by id still issues them.
 */
function encodeSortedCursor(sort: Sort, spec: ListSpec, after: string, key: string | null): string {
  const payload = sortName(sort) === spec.defaultSort ? { v: 1, after } : { v: 2, s: sortName(sort), k: key, after };
  return Buffer.from(JSON.stringify(payload)).toString('base64url');
}

function decodeSortedCursor(cursor: string | undefined, sort: Sort, spec: ListSpec): Position | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  let parsed: { v?: unknown; s?: unknown; k?: unknown; after?: unknown } | undefined;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const after = parsed && typeof parsed.after === 'string' && parsed.after.length > 0 ? parsed.after : undefined;
  if (!parsed || !after) throw new ValidationError('the cursor is not one this API issued', { cursor: 'invalid cursor' });
  const cursorSort = parsed.v === 1 ? spec.defaultSort : parsed.v === 2 && typeof parsed.s === 'string' ? parsed.s : undefined;
  if (cursorSort === undefined) throw new ValidationError('the cursor is not one this API issued', { cursor: 'invalid cursor' });
  if (cursorSort !== sortName(sort))
    throw new ValidationError('the cursor belongs to another sort of this list', {
      cursor: `issued for sort=${cursorSort}: ask for the first page of sort=${sortName(sort)}`,
    });
  const key = typeof parsed.k === 'string' ? parsed.k : null;
  return { after, key };
}

const castKey = (kind: SortKind, key: string | null): RawBuilder<unknown> =>
  kind === 'timestamptz' ? sql`cast(${key} as timestamptz)` : kind === 'bigint' ? sql`cast(${key} as bigint)` : sql`cast(${key} as text)`;

const keyText = (kind: SortKind, value: unknown): string | null => {
  if (value === null || value === undefined) return null;
  if (kind === 'timestamptz') return (value instanceof Date ? value : new Date(String(value))).toISOString();
  return String(value);
};

/**
 * A search that matches a row when any of its branches does (id prefix, email, note): each is a
 * where-clause on the list's filtered query. Kept apart instead of OR-ed in one WHERE, each
 * branch walks its own index to its first page, and the page is the best of those few rows:
 * an OR holding a sub-select (the client's email of a subscription) cannot be planned as a
 * join, and PostgreSQL then filters the whole table row by row (bench/lists: 750 ms at a
 * million subscriptions against 2-8 ms this way).
 */
export type SearchBranch = (q: SelectQueryBuilder<any, any, any>) => SelectQueryBuilder<any, any, any>;

/**
 * One page of `query` in the requested sort: keyset by (sort key, id), `limit + 1` rows so
 * the page knows whether another exists, and on the first page the total of the filtered
 * query. `map` turns the page's rows into views (it may read more, once per page). With
 * `anyOf`, a row is in the list when any branch matches it (SearchBranch).
 */
export async function listPage<DB, TB extends keyof DB, O extends { id: string }, T>(
  db: Kysely<any>,
  query: SelectQueryBuilder<DB, TB, O>,
  req: ListRequest,
  spec: ListSpec,
  map: (rows: O[]) => T[] | Promise<T[]>,
  anyOf?: SearchBranch[],
): Promise<ListPage<T>> {
  const sort = parseSort(req.sort, spec);
  const position = decodeSortedCursor(req.cursor, sort, spec);
  // The sort key is added to rows of any list: the builder is widened for it.
  const base = query as SelectQueryBuilder<any, any, any>;
  const anyDb = db as Kysely<any>;
  const total = position ? null : await countTotal(anyDb, base, { anyOf, idColumn: spec.idColumn });
  const id = sql.ref<string>(spec.idColumn);
  const direction = sort.desc ? 'desc' : 'asc';
  const cmp = sql.raw(sort.desc ? '<' : '>');
  const key = sort.name === 'created' ? undefined : spec.sorts[sort.name];
  /** The rows after the cursor, in the sort's order, a page and one. */
  const positioned = (qb: SelectQueryBuilder<any, any, any>) => {
    let q = qb;
    if (key) {
      if (position) q = q.where(sql<boolean>`(${key.expr}, ${id}) ${cmp} (${castKey(key.kind, position.key)}, ${position.after})`);
      q = q.orderBy(key.expr, direction);
    } else if (position) {
      q = q.where(id, sort.desc ? '<' : '>', position.after);
    }
    return q.orderBy(id, direction).limit(req.limit + 1);
  };
  let q = base;
  if (anyOf && anyOf.length > 0) {
    const firstOf = anyOf.map((branch, i) =>
      anyDb.selectFrom(positioned(branch(base)).clearSelect().select(id.as('id')).as(`b${i}`)).select(`b${i}.id`),
    );
    const candidates = firstOf.slice(1).reduce((u, b) => u.union(b), firstOf[0] as (typeof firstOf)[0]);
    q = q.where(id, 'in', anyDb.selectFrom(candidates.as('candidates')).select('candidates.id'));
  }
  if (key) q = q.select(key.expr.as('sort_key'));
  const rows = (await positioned(q).execute()) as Array<O & { sort_key?: unknown }>;
  const more = rows.length > req.limit;
  const slice = more ? rows.slice(0, req.limit) : rows;
  const last = slice[slice.length - 1];
  const next = more && last ? encodeSortedCursor(sort, spec, last.id, key ? keyText(key.kind, last.sort_key) : null) : null;
  for (const r of slice) delete r.sort_key;
  return {
    items: await map(slice),
    next_cursor: next,
    total: total?.count ?? null,
    total_exact: total?.exact ?? null,
  };
}

/**
 * Rows of the filtered query (matching any of `anyOf` when given): counted up to
 * COUNT_EXACT_UP_TO (a bounded walk, per branch), and past it the planner's estimate of the
 * whole, which reads no rows at all.
 */
export async function countTotal(
  db: Kysely<any>,
  query: SelectQueryBuilder<any, any, any>,
  opts: { exactUpTo?: number; anyOf?: SearchBranch[] | undefined; idColumn?: string } = {},
): Promise<{ count: number; exact: boolean }> {
  const exactUpTo = opts.exactUpTo ?? COUNT_EXACT_UP_TO;
  const anyOf = opts.anyOf;
  const id = sql.ref<string>(opts.idColumn ?? 'id');
  const idsOf = (q: SelectQueryBuilder<any, any, any>) => q.clearSelect().clearOrderBy().select(sql`1`.as('one'));
  const branches = anyOf && anyOf.length > 0 ? anyOf.map((b) => b(query)) : [query];
  const firstOf = (limit: number | undefined) =>
    branches.map((b, i) => {
      // A branch's rows by id: the union is distinct, a row matching two branches counts once.
      const rows = b.clearSelect().clearOrderBy().select(id.as('id'));
      return db.selectFrom((limit === undefined ? rows : rows.limit(limit)).as(`b${i}`)).select(`b${i}.id`);
    });
  const union = (parts: ReturnType<typeof firstOf>) => parts.slice(1).reduce((u, b) => u.union(b), parts[0] as (typeof parts)[0]);
  const bounded: SelectQueryBuilder<any, any, any> =
    branches.length > 1 ? union(firstOf(exactUpTo + 1)) : idsOf(query).limit(exactUpTo + 1);
  const counted = await db.selectFrom(bounded.as('matching')).select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow();
  const n = Number(counted.n);
  // Each branch bounded at exactUpTo + 1: a union at or under exactUpTo had no branch cut short.
  if (n <= exactUpTo) return { count: n, exact: true };
  const whole: SelectQueryBuilder<any, any, any> = branches.length > 1 ? union(firstOf(undefined)) : idsOf(query);
  const compiled = whole.compile();
  const explained = await db.executeQuery<Record<string, unknown>>(
    CompiledQuery.raw(`explain (format json) ${compiled.sql}`, [...compiled.parameters]),
  );
  const estimate = planRows(explained.rows[0]?.['QUERY PLAN']);
  return { count: Math.max(exactUpTo + 1, Math.round(estimate ?? 0)), exact: false };
}

function planRows(plan: unknown): number | undefined {
  const parsed = typeof plan === 'string' ? (JSON.parse(plan) as unknown) : plan;
  const top = Array.isArray(parsed) ? (parsed[0] as { Plan?: { 'Plan Rows'?: unknown } } | undefined) : undefined;
  const rows = top?.Plan?.['Plan Rows'];
  return typeof rows === 'number' && Number.isFinite(rows) ? rows : undefined;
}

/** Under this many characters a search matches the start of an email or id; from it, anywhere in the text. */
export const SEARCH_SUBSTRING_FROM = 3;

export interface SearchTerms {
  /** The query as typed, trimmed. */
  text: string;
  /** Lower-cased, LIKE-escaped, `%` around: for emails (stored lower-case) and ILIKE on text. */
  contains: string;
  /** Lower-cased, LIKE-escaped, `%` after: a prefix of an email or an id. */
  prefix: string;
  /** Whether the query is long enough to match inside text (SEARCH_SUBSTRING_FROM). */
  substring: boolean;
}

/** `\`, `%` and `_` stand for themselves in a LIKE pattern only escaped (PostgreSQL's default escape is `\`). */
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The search a `q` asks for, or undefined when it is blank. */
export function searchTerms(q: string | undefined): SearchTerms | undefined {
  const text = q?.trim() ?? '';
  if (text === '') return undefined;
  const lower = likeEscape(text.toLowerCase());
  return { text, contains: `%${lower}%`, prefix: `${lower}%`, substring: [...text].length >= SEARCH_SUBSTRING_FROM };
}

import { type RawBuilder, sql } from 'kysely';

// Arrays sent to PostgreSQL as one array literal built here. node-postgres turns a JS array
// parameter into a literal element by element (prepareValue, then two regular-expression
// replaces on each): for a usage report's 5,000 ids and 10,000 byte counts that was ~15% of the
// gateway's CPU at 150,000 entries/s (bench:usage profile, 2026-12-01).

/**
 * `values` as a PostgreSQL text[] (each element double-quoted; `"` and `\` backslash-escaped,
 * the literal syntax's only two specials inside quotes: commas, braces, spaces, `NULL` and any
 * other character are the element's own). Ids without either, nearly always, are joined in one
 * native call.
 */
export function textArray(values: readonly string[]): RawBuilder<string[]> {
  if (values.length === 0) return sql<string[]>`${'{}'}::text[]`;
  const plain = values.join('');
  if (!plain.includes('"') && !plain.includes('\\')) return sql<string[]>`${`{"${values.join('","')}"}`}::text[]`;
  const parts = values.map((v) => `"${v.replace(/["\\]/g, '\\$&')}"`);
  return sql<string[]>`${`{${parts.join(',')}}`}::text[]`;
}

/** Integers as a PostgreSQL int8[] (decimal; a value outside int8 fails the cast). */
export function int8Array(values: readonly bigint[]): RawBuilder<string[]> {
  return sql<string[]>`${`{${values.join(',')}}`}::int8[]`;
}

import { type RawBuilder, sql } from 'kysely';

// Arrays sent to PostgreSQL as one array literal built here. node-postgres turns a JS array
// parameter into a literal element by element (prepareValue, then two regular-expression
// replaces on each): for a usage report's 5,000 ids and 10,000 byte counts that was ~15% of the
// gateway's CPU at 150,000 entries/s (bench:usage profile, 2026-12-01).

/**
 * `values` as a PostgreSQL text[] (each element double-quoted; `"` and `\` backslash-escaped,
 * the literal syntax's only two specials inside quotes: commas, braces, spaces, `NULL` and any
 * other character are the element's own).
 */
export function textArray(values: readonly string[]): RawBuilder<string[]> {
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as string;
    parts[i] = v.includes('"') || v.includes('\\') ? `"${v.replace(/["\\]/g, '\\$&')}"` : `"${v}"`;
  }
  return sql<string[]>`${`{${parts.join(',')}}`}::text[]`;
}

/** Integers written as decimal text (what String(bigint) gives) as a PostgreSQL int8[]; a value that is not one fails the cast. */
export function int8Array(values: readonly string[]): RawBuilder<string[]> {
  for (const v of values) if (!isDecimal(v)) throw new TypeError(`not an int8: ${JSON.stringify(v).slice(0, 40)}`);
  return sql<string[]>`${`{${values.join(',')}}`}::int8[]`;
}

/** An optional minus and 1-19 ASCII digits, checked without a regular expression. */
function isDecimal(v: string): boolean {
  const start = v.charCodeAt(0) === 45 ? 1 : 0;
  if (v.length <= start || v.length - start > 19) return false;
  for (let i = start; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

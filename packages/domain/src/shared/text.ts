/**
 * The one text rule every input from outside passes (HTTP bodies, paths, queries; gRPC
 * messages; CLI arguments): no NUL character and no unpaired UTF-16 surrogate. PostgreSQL
 * refuses both in text and JSON (22021, 22P05), and JSON.stringify of a lone surrogate is not
 * valid UTF-8 for the audit log; refused at the edge, such a value never reaches a statement.
 * Linear in the length of the text, no regular expression.
 */
export const TEXT_RULE = 'must not contain NUL characters or unpaired UTF-16 surrogates';

/** Whether `s` may be stored as text. */
export function isStorableText(s: string): boolean {
  return s.isWellFormed() && !s.includes('\u0000');
}

/**
 * The first string in `value` (a string, or any depth of arrays and plain objects, keys
 * included) that breaks the text rule, as a dot path (`(body)` for the value itself; for a bad
 * key, the path of the object holding it), or null when every string is storable.
 */
export function findUnstorableText(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return isStorableText(value) ? null : path || '(body)';
  if (value === null || typeof value !== 'object') return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = findUnstorableText(value[i], path ? `${path}.${i}` : String(i));
      if (bad) return bad;
    }
    return null;
  }
  for (const [key, inner] of Object.entries(value)) {
    if (!isStorableText(key)) return path || '(body)';
    const bad = findUnstorableText(inner, path ? `${path}.${key}` : key);
    if (bad) return bad;
  }
  return null;
}

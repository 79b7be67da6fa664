/** A PostgreSQL unique violation (23505), optionally on one constraint; same code from pg and PGlite. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: unknown; constraint?: unknown; message?: unknown } | null;
  if (!e || e.code !== '23505') return false;
  if (!constraint) return true;
  return e.constraint === constraint || (typeof e.message === 'string' && e.message.includes(constraint));
}

/** A PostgreSQL foreign-key violation (23503), optionally on one constraint; same code from pg and PGlite. */
export function isForeignKeyViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: unknown; constraint?: unknown; message?: unknown } | null;
  if (!e || e.code !== '23503') return false;
  if (!constraint) return true;
  return e.constraint === constraint || (typeof e.message === 'string' && e.message.includes(constraint));
}

/** Ids for a conflict message: the first few, then how many more. */
export function idList(ids: readonly string[], shown = 5): string {
  const head = ids.slice(0, shown).join(', ');
  return ids.length > shown ? `${head} and ${ids.length - shown} more` : head;
}

/** PostgreSQL deadlock_detected (40P01) or serialization_failure (40001): the loser rolled back whole and may simply run again. */
export function isRetryableConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
}

/** Runs `work` (one statement or one transaction) again when it lost a deadlock or a serialization conflict, up to `attempts` times. */
export async function retryOnConflict<T>(work: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt < attempts && isRetryableConflict(err)) continue;
      throw err;
    }
  }
}

/**
 * PostgreSQL refusing text it cannot hold: a NUL (22021), an escape it cannot translate such as
 * \u0000 in JSON (22P05), or malformed input of a typed value such as a lone surrogate escape in
 * JSON (22P02). Every surface applies the text rule first, so this only names a surface that
 * forgot to: the transports answer it as a refused input, not as a 500.
 */
export function isInvalidTextError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '22021' || code === '22P05' || code === '22P02';
}

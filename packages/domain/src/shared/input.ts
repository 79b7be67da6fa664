import { z } from 'zod';
import { isDomainError, ValidationError } from '../errors.ts';
import { findUnstorableText, TEXT_RULE } from './text.ts';

/** Zod issues -> per-field reasons (dot path; `(body)` for the input itself), the `errors` of a problem document. */
export function fieldErrors(error: z.ZodError, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const issue of error.issues) {
    const path = issue.path.map(String).join('.') || '(body)';
    const key = prefix && path !== '(body)' ? `${prefix}${path}` : path;
    out[key] ??= issue.message;
  }
  return out;
}

/**
 * Parses a use case's input with the schema the use case owns. Every surface (admin API,
 * portal, CLI, worker, tests) goes through this or through a transport's validator using the
 * same schema: the schemas are branded, so a use case cannot be called with input that did not.
 * A failure is a ValidationError naming each field. Text that breaks the text rule (NUL, lone
 * surrogates) is refused first, whatever the schema says of the field.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, message = 'invalid input'): z.output<S> {
  const bad = findUnstorableText(input);
  if (bad) throw new ValidationError(message, { [bad]: TEXT_RULE });
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new ValidationError(message, fieldErrors(result.error));
}

/**
 * A zod transform around a domain normalizer (one that returns the canonical value or throws a
 * ValidationError naming its reason), so the rule stays one function that schemas and use
 * cases share.
 */
export function normalizedBy<In, Out>(normalize: (value: In) => Out) {
  return (value: In, ctx: z.RefinementCtx): Out => {
    try {
      return normalize(value);
    } catch (err) {
      if (!isDomainError(err) || err.type !== 'validation') throw err;
      ctx.addIssue({ code: 'custom', message: Object.values(err.errors ?? {})[0] ?? err.message });
      return z.NEVER;
    }
  };
}

/**
 * Whether a PATCH input gives no field at all (`{}`, or only absent ones). Such a PATCH is a
 * read (issue 12.8): every update use case answers it with the resource as it is, through the
 * resource's read use case, before opening a unit of work. So it writes no row (updated_at
 * stays), moves no node revision, announces nothing and writes no audit entry; a missing id is
 * still 404 and a role the write needs is still checked. A PATCH that re-sends values as they
 * are goes through its use case, which moves revisions only for what really differs.
 */
export function isEmptyPatch(input: object): boolean {
  return Object.values(input).every((v) => v === undefined);
}

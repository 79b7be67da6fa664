import type { TFunction } from 'i18next';
import type { FieldValues, Path, UseFormSetError } from 'react-hook-form';
import { problemOf } from '../api.ts';

/**
 * Whether a 403 sign-in refusal means "waits for approval" (client status pending). The server
 * says so in words only today; `reason` is read first where it gives one.
 */
export function awaitsApproval(err: unknown): boolean {
  const p = problemOf(err);
  if (!p || p.status !== 403) return false;
  if (p.reason) return p.reason === 'client_pending' || p.reason === 'pending';
  return /approv/i.test(p.detail);
}

/**
 * A refusal in the reader's language where its kind is known (too many attempts, the server
 * away), else the server's own words. Field errors of a 400 go under their fields.
 */
export function describeProblem<T extends FieldValues>(
  t: TFunction,
  err: unknown,
  setError?: UseFormSetError<T>,
  fields: readonly Path<T>[] = [],
): string {
  const p = problemOf(err);
  if (!p) return t('common.unreachable');
  if (p.status === 429) return t('common.tooMany');
  if (p.status >= 500) return t('common.serverError');
  let placed = false;
  if (setError) {
    for (const [key, reason] of Object.entries(p.errors)) {
      const field = fields.find((f) => key === f || key.startsWith(`${f}.`) || key === `body.${f}`);
      if (field) {
        setError(field, { type: 'server', message: reason });
        placed = true;
      }
    }
  }
  return placed && p.status === 400 ? '' : p.detail;
}

import type { TFunction } from 'i18next';
import type { FieldValues, Path, UseFormSetError } from 'react-hook-form';
import { problemOf } from '../api.ts';

/** The codes of a refused sign-in (403; packages/domain/src/auth/client-sign-in-refusal.ts), each said in the reader's language. */
export const REFUSAL_CODES = ['client-pending', 'client-rejected', 'client-disabled', 'email-unconfirmed'] as const;
type RefusalCode = (typeof REFUSAL_CODES)[number];
const refusalCode = (code: unknown): RefusalCode | null => (REFUSAL_CODES.includes(code as RefusalCode) ? (code as RefusalCode) : null);

/** Whether a 403 sign-in refusal means "waits for approval" (the client's status is pending: code client-pending). */
export function awaitsApproval(err: unknown): boolean {
  const p = problemOf(err);
  return p?.status === 403 && p.code === 'client-pending';
}

/**
 * A refusal in the reader's language where its kind is known (too many attempts, the server
 * away, a refused sign-in's code), else the server's own words. Field errors of a 400 go under their fields.
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
  // A refused sign-in by its code; an unknown code keeps the server's words.
  const code = p.status === 403 ? refusalCode(p.code) : null;
  if (code) return t(`refused.${code}`);
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

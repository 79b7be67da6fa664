import { ApiError } from '@svc/api-client';
import type { FieldValues, Path, UseFormSetError } from 'react-hook-form';

/**
 * The server's refusal on the form: each `errors` entry of the problem document under its field,
 * the detail as the form's own error. The rules themselves live once, in packages/domain; the
 * forms check only what a person must fill in before asking.
 */
export function showProblem<T extends FieldValues>(err: unknown, setError: UseFormSetError<T>, fields: readonly string[]): string {
  if (!(err instanceof ApiError)) return err instanceof Error ? err.message : String(err);
  let placed = false;
  for (const [key, reason] of Object.entries(err.problem.errors)) {
    const field = fields.find((f) => key === f || key.startsWith(`${f}.`));
    if (field) {
      setError(field as Path<T>, { type: 'server', message: reason });
      placed = true;
    }
  }
  return placed && err.problem.status === 400 ? '' : err.problem.detail;
}

import { type DomainError, parseInput } from '@svc/domain';

/** How a use case refused (its DomainError), or undefined when it did not. */
export const refusal = (p: Promise<unknown>): Promise<DomainError | undefined> =>
  p.then(
    () => undefined,
    (err: DomainError) => err,
  );

/** The per-field reasons an input schema refuses `input` with, as a problem's `errors`; undefined when it passes. */
export function refused(schema: Parameters<typeof parseInput>[0], input: unknown): Record<string, string> | undefined {
  try {
    parseInput(schema, input);
    return undefined;
  } catch (err) {
    return (err as DomainError).errors;
  }
}

/**
 * Domain errors, each with a stable `type` slug. Transports map them once (packages/http
 * to problem+json, the control plane to gRPC status). Compare `type`, never `instanceof`
 * across packages.
 */
export type ErrorType =
  | 'validation'
  | 'unauthenticated'
  | 'forbidden'
  | 'not-found'
  | 'conflict'
  | 'unprocessable'
  | 'rate-limited'
  | 'unavailable'
  | 'bad-gateway'
  | 'timeout';

export class DomainError extends Error {
  constructor(
    readonly type: ErrorType,
    message: string,
    /** Per-field reasons (problem+json `errors`). */
    readonly errors?: Record<string, string>,
    /** Extra members safe to show to the caller. */
    readonly extra?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const isDomainError = (e: unknown): e is DomainError =>
  e instanceof Error && e.name === 'DomainError' && typeof (e as DomainError).type === 'string';

export class ValidationError extends DomainError {
  constructor(message: string, errors?: Record<string, string>) {
    super('validation', message, errors);
  }
}
export class UnauthenticatedError extends DomainError {
  constructor(message = 'authentication required') {
    super('unauthenticated', message);
  }
}
export class ForbiddenError extends DomainError {
  /** `extra.code`: a machine-readable reason beside the words (a front end translates by it). */
  constructor(message = 'not allowed', extra?: Record<string, unknown>) {
    super('forbidden', message, undefined, extra);
  }
}
export class NotFoundError extends DomainError {
  constructor(entity: string, id?: string) {
    super('not-found', id ? `${entity} ${id} not found` : `${entity} not found`);
  }
}
export class ConflictError extends DomainError {
  constructor(message: string, errors?: Record<string, string>, extra?: Record<string, unknown>) {
    super('conflict', message, errors, extra);
  }
}
/**
 * The request is well formed but cannot be carried out as it stands (422): an
 * Idempotency-Key already used with another body.
 */
export class UnprocessableError extends DomainError {
  constructor(message: string, errors?: Record<string, string>) {
    super('unprocessable', message, errors);
  }
}
export class RateLimitedError extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super('rate-limited', `too many attempts; retry in ${retryAfterSeconds} s`, undefined, {
      retry_after_seconds: retryAfterSeconds,
    });
  }
}
export class UnavailableError extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super('unavailable', message);
  }
}
/**
 * Another system we called answered, with something we cannot use (502): a payment provider
 * handing back the checkout of another payment. Not the caller's fault, nothing was written.
 */
export class BadGatewayError extends DomainError {
  constructor(message: string) {
    super('bad-gateway', message);
  }
}
/** Something we waited on (an agent's answer) did not come in time. */
export class TimeoutError extends DomainError {
  constructor(message: string) {
    super('timeout', message);
  }
}

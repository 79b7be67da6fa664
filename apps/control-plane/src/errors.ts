import { type DomainError, isDomainError } from '@svc/domain';
import { ServerError, Status } from 'nice-grpc';

const STATUS: Record<DomainError['type'], Status> = {
  validation: Status.INVALID_ARGUMENT,
  unauthenticated: Status.UNAUTHENTICATED,
  forbidden: Status.PERMISSION_DENIED,
  'not-found': Status.NOT_FOUND,
  conflict: Status.FAILED_PRECONDITION,
  'rate-limited': Status.RESOURCE_EXHAUSTED,
  unavailable: Status.UNAVAILABLE,
  timeout: Status.DEADLINE_EXCEEDED,
};

/** The one place a domain error becomes a gRPC status (field reasons go into the message). */
export function toGrpcError(err: unknown): unknown {
  if (!isDomainError(err)) return err;
  const fields = err.errors ? Object.entries(err.errors).map(([k, v]) => `${k}: ${v}`) : [];
  return new ServerError(STATUS[err.type], fields.length ? `${err.message} (${fields.join('; ')})` : err.message);
}

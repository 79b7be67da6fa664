import { type DomainDeps, type DomainError, isDomainError } from '@svc/domain';
import { ServerError, Status } from 'nice-grpc';

const STATUS: Record<DomainError['type'], Status> = {
  validation: Status.INVALID_ARGUMENT,
  unauthenticated: Status.UNAUTHENTICATED,
  forbidden: Status.PERMISSION_DENIED,
  'not-found': Status.NOT_FOUND,
  conflict: Status.FAILED_PRECONDITION,
  'rate-limited': Status.RESOURCE_EXHAUSTED,
  unprocessable: Status.FAILED_PRECONDITION,
  unavailable: Status.UNAVAILABLE,
  timeout: Status.DEADLINE_EXCEEDED,
};

/** The one place a domain error becomes a gRPC status (field reasons go into the message). */
export function toGrpcError(err: unknown): unknown {
  if (!isDomainError(err)) return err;
  const fields = err.errors ? Object.entries(err.errors).map(([k, v]) => `${k}: ${v}`) : [];
  return new ServerError(STATUS[err.type], fields.length ? `${err.message} (${fields.join('; ')})` : err.message);
}

/**
 * A call's final status from whatever its handler threw: a domain error mapped as above, a
 * status already chosen kept, anything else (a bug, the database away) logged and answered
 * INTERNAL without details. Never UNKNOWN (what nice-grpc answers for a plain Error); bad
 * input never gets here, it is refused as INVALID_ARGUMENT by the decode step or the domain.
 */
export function toGrpcStatus(err: unknown, log: DomainDeps['log'], what: string): ServerError {
  const mapped = toGrpcError(err);
  if (mapped instanceof ServerError) return mapped;
  log.error({ err }, what);
  return new ServerError(Status.INTERNAL, `${what}; see the gateway log`);
}

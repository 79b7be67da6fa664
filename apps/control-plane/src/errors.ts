import { type DomainDeps, type DomainError, isDatabaseUnavailable, isDomainError } from '@svc/domain';
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
  'bad-gateway': Status.UNAVAILABLE,
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
 * status already chosen kept, the database away (down, restarting) UNAVAILABLE so the agent
 * retries, anything else (a bug) logged and answered INTERNAL without details. Never UNKNOWN
 * (what nice-grpc answers for a plain Error); bad input never gets here, it is refused as
 * INVALID_ARGUMENT by the decode step or the domain.
 */
export function toGrpcStatus(err: unknown, log: DomainDeps['log'], what: string): ServerError {
  const mapped = toGrpcError(err);
  if (mapped instanceof ServerError) return mapped;
  if (isDatabaseUnavailable(err)) {
    // The database is down or restarting: the agent reconnects and is served once it is back.
    log.warn({ err: { message: (err as Error).message, code: (err as { code?: unknown }).code } }, `${what}: database unavailable`);
    return new ServerError(Status.UNAVAILABLE, `${what}: the database is not reachable; try again`);
  }
  log.error({ err }, what);
  return new ServerError(Status.INTERNAL, `${what}; see the gateway log`);
}

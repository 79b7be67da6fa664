/**
 * Whether an error says the database cannot be reached right now (down, restarting, refusing
 * connections, a connection cut under a query), as opposed to a bug or a refused statement.
 * Callers answer these with "try again" (HTTP 503, gRPC UNAVAILABLE) instead of an internal
 * error: the server comes back and the same request then succeeds.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || SQLSTATES.has(code) || code.startsWith('08'))) return true;
    if (typeof message === 'string' && MESSAGES.some((m) => message.includes(m))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** The socket never connected or was cut. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * SQLSTATEs of a server going away or not taking connections yet (class 08, connection
 * exception, is matched by its prefix): 57P01 admin_shutdown (pg_ctl stop -m fast),
 * 57P02 crash_shutdown (another backend crashed), 57P03 cannot_connect_now (starting up or
 * shutting down), 53300 too_many_connections.
 */
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** node-postgres's own words for a connection lost without a SQLSTATE. */
const MESSAGES = [
  'Connection terminated unexpectedly',
  'Connection terminated due to connection timeout',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
];

import { ClientError, Status } from 'nice-grpc';

/**
 * The engine's answers, sorted into what the agent decides on. The engine reports user errors
 * as gRPC UNKNOWN with a Go error text (Xray-core and v2ray-core 4.x word them alike):
 * "User <email> already exists.", "User <email> not found.", "handler not found: <tag>",
 * "proxy is not a UserManager" (an inbound that cannot change users at run time, e.g. v2ray
 * 4.x Shadowsocks or a single-user Xray one), "Unknown account type: ..." (an account the
 * engine does not know). The original text stays in `message`.
 */

export type EngineApiErrorKind = 'unavailable' | 'exists' | 'not-found' | 'unsupported' | 'failed';

export class EngineApiError extends Error {
  constructor(
    readonly kind: EngineApiErrorKind,
    /** The gRPC status code (nice-grpc `Status`); UNKNOWN for a refusal decided before any call. */
    readonly grpcCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'EngineApiError';
  }
}

const TEXT_KINDS: Array<[RegExp, EngineApiErrorKind]> = [
  [/already exists/i, 'exists'],
  [/not found/i, 'not-found'],
  [/not a UserManager|unknown account type|unknown type|unknown operation|not an inbound operation/i, 'unsupported'],
];

/** `err` from a call to the engine (a nice-grpc ClientError, or the abort of `timeout`) as an EngineApiError. */
export function toEngineApiError(err: unknown, call: string, timeout: AbortSignal): EngineApiError {
  if (err instanceof EngineApiError) return err;
  if (timeout.aborted && !(err instanceof ClientError))
    return new EngineApiError('unavailable', Status.DEADLINE_EXCEEDED, `${call}: the engine API did not answer in time`);
  if (!(err instanceof ClientError)) return new EngineApiError('failed', Status.UNKNOWN, `${call}: ${String(err)}`);
  const message = `${call}: ${err.details}`;
  switch (err.code) {
    case Status.UNAVAILABLE:
    case Status.DEADLINE_EXCEEDED:
      return new EngineApiError('unavailable', err.code, message);
    // No such service or method: the API is off, or the engine is of another flavour.
    case Status.UNIMPLEMENTED:
      return new EngineApiError('unsupported', err.code, message);
  }
  const kind = TEXT_KINDS.find(([text]) => text.test(err.details))?.[1] ?? 'failed';
  return new EngineApiError(kind, err.code, message);
}

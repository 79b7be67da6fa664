import {
  callFailure,
  NotFoundError,
  type OutboundPort,
  PROVIDER_ANSWER_MAX_BYTES,
  PROVIDER_CALL_TIMEOUT_MS,
  providerSays,
  redact,
  refusedByProvider,
  UnavailableError,
} from '@svc/domain';

export interface ProviderCall {
  provider: string;
  /** What the call is for, in error messages ("create invoice"). */
  step: string;
  method: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  json?: unknown;
  timeoutMs?: number | undefined;
  /** Values that must never appear in an error message. */
  secrets: readonly string[];
  /** Picks a short error text out of a refusal body (the provider's error code). */
  errorText?: (body: unknown) => unknown;
  /** A 404 means the thing asked for does not exist (NotFoundError), not a broken endpoint. */
  notFoundIsMissing?: boolean;
}

export interface ProviderAnswer {
  status: number;
  body: unknown;
}

/** The outbound client an adapter was given; an adapter made without one (webhook checks) has no way out. */
export function outboundOf(
  provider: string,
  outbound: Pick<OutboundPort, 'request' | 'fetch'> | undefined,
): Pick<OutboundPort, 'request' | 'fetch'> {
  if (!outbound) throw new UnavailableError(`${provider}: this adapter was made without the outbound client and cannot call out`);
  return outbound;
}

/**
 * One JSON call to a provider's API through the outbound client: the destination policy, a time
 * limit, no redirects followed, the answer read up to a size limit and parsed; failures mapped
 * to domain errors that name the provider and the step but never a secret. Any non-2xx is
 * UnavailableError (a 404 NotFoundError when asked).
 */
export async function callProvider(outbound: Pick<OutboundPort, 'request'> | undefined, call: ProviderCall): Promise<ProviderAnswer> {
  let res: Awaited<ReturnType<OutboundPort['request']>>;
  try {
    res = await outboundOf(call.provider, outbound as Pick<OutboundPort, 'request' | 'fetch'>).request({
      url: call.url,
      method: call.method,
      timeoutMs: call.timeoutMs ?? PROVIDER_CALL_TIMEOUT_MS,
      maxBytes: PROVIDER_ANSWER_MAX_BYTES,
      headers: {
        accept: 'application/json',
        'user-agent': 'svc-control-plane',
        ...(call.json !== undefined ? { 'content-type': 'application/json' } : {}),
        ...call.headers,
      },
      ...(call.json !== undefined ? { body: JSON.stringify(call.json) } : {}),
    });
  } catch (err) {
    throw callFailure(call.provider, call.step, err, call.secrets);
  }
  const text = res.body.toString('utf8');
  const ok = res.status >= 200 && res.status < 300;
  let body: unknown = null;
  try {
    body = text.length > 0 ? JSON.parse(text) : null;
  } catch {
    if (ok) throw new UnavailableError(`${call.provider} answered with something that is not JSON (${call.step})`, 30);
  }
  if (res.status === 404 && call.notFoundIsMissing) throw new NotFoundError(`${call.provider} payment`);
  if (!ok) {
    const said = providerSays(call.errorText?.(body));
    throw refusedByProvider(call.provider, call.step, res.status, said ? redact(said, call.secrets) : null, call.secrets);
  }
  return { status: res.status, body };
}

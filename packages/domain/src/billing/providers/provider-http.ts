import { NotFoundError, UnavailableError } from '../../errors.ts';
import { PROVIDER_ANSWER_MAX_BYTES, PROVIDER_CALL_TIMEOUT_MS } from './port.ts';
import { callFailure, providerSays, redact, refusedByProvider } from './provider-errors.ts';

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

/**
 * One JSON call to a provider's API: a time limit, no redirects followed, the answer read up
 * to a size limit and parsed; failures mapped to domain errors that name the provider and the
 * step but never a secret. Any non-2xx is UnavailableError (a 404 NotFoundError when asked).
 */
export async function callProvider(call: ProviderCall): Promise<ProviderAnswer> {
  let res: Response;
  try {
    res = await fetch(call.url, {
      method: call.method,
      redirect: 'manual',
      signal: AbortSignal.timeout(call.timeoutMs ?? PROVIDER_CALL_TIMEOUT_MS),
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
  let text: string;
  try {
    text = await readBounded(res, PROVIDER_ANSWER_MAX_BYTES);
  } catch (err) {
    throw callFailure(call.provider, call.step, err, call.secrets);
  }
  let body: unknown = null;
  try {
    body = text.length > 0 ? JSON.parse(text) : null;
  } catch {
    if (res.ok) throw new UnavailableError(`${call.provider} answered with something that is not JSON (${call.step})`, 30);
  }
  if (res.status === 404 && call.notFoundIsMissing) throw new NotFoundError(`${call.provider} payment`);
  if (!res.ok) {
    const said = providerSays(call.errorText?.(body));
    throw refusedByProvider(call.provider, call.step, res.status, said ? redact(said, call.secrets) : null, call.secrets);
  }
  return { status: res.status, body };
}

async function readBounded(res: Response, max: number): Promise<string> {
  if (!res.body) return '';
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > max) {
    await res.body.cancel();
    throw new TypeError('answer too large');
  }
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      throw new TypeError('answer too large');
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

import { type DomainError, isDomainError, TimeoutError, UnavailableError, ValidationError } from '../../errors.ts';
import { outboundFailure, outboundReason } from '../../shared/outbound.ts';

export type WebhookRefusal =
  | 'too-large'
  | 'missing-signature'
  | 'bad-signature'
  | 'stale'
  | 'future'
  | 'malformed'
  | 'source-not-allowed'
  | 'unknown-payment';

/**
 * A webhook we do not accept: forged, stale, from an address not allowed, or not a body we
 * can read. Type `validation`, so the ingress answers 400 and stores nothing. The message
 * names the reason and never echoes the body or the secret.
 */
export class WebhookRefusedError extends ValidationError {
  constructor(
    readonly provider: string,
    readonly reason: WebhookRefusal,
    detail: string,
  ) {
    super(`${provider} webhook refused: ${detail}`, { webhook: reason });
  }
}

export const isWebhookRefusal = (e: unknown): e is WebhookRefusedError =>
  isDomainError(e) && e.type === 'validation' && e.errors?.webhook !== undefined;

/**
 * Removes every secret value (and its 8-character head, which some providers echo back)
 * from a text that may end up in an error message or a log.
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) {
    if (s.length < 4) continue;
    out = out.split(s).join('[redacted]');
    if (s.length > 12) out = out.split(s.slice(0, 8)).join('[redacted]');
  }
  return out;
}

/** A bounded, printable excerpt of something a provider said (an error code or message). */
export const providerSays = (v: unknown, max = 120): string | null =>
  typeof v === 'string' && v.length > 0 ? v.replace(/[^\x20-\x7e]/g, '?').slice(0, max) : null;

/**
 * What a failed outbound call means for the caller: no answer in time -> TimeoutError (504);
 * unreachable, refused by the destination policy, a broken answer, or a refusal of ours by the
 * provider (bad key, 4xx) -> UnavailableError (503): none of these is the payer's fault, and
 * none is a 500.
 */
export function callFailure(provider: string, step: string, err: unknown, secrets: readonly string[]): DomainError {
  if (isDomainError(err)) return err;
  // Through the outbound client: its reason, never the connection-level detail. The API base is
  // the configuration's (not an admin's), so a timeout may still be told apart as a 504.
  const outbound = outboundFailure(err);
  if (outbound?.timedOut) return new TimeoutError(`${provider} did not answer in time (${step}); try again later`);
  if (outbound?.reason === 'unreachable') return new UnavailableError(`${provider} cannot be reached (${step}); try again later`, 30);
  if (outbound) return new UnavailableError(`${provider} (${step}): ${outboundReason(outbound)}`, 30);
  const e = err as { name?: string; code?: string; cause?: { code?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError' || e?.code === 'ETIMEDOUT' || e?.cause?.code === 'ETIMEDOUT') {
    return new TimeoutError(`${provider} did not answer in time (${step}); try again later`);
  }
  const code = e?.cause?.code ?? e?.code;
  const why = typeof code === 'string' && /^[A-Z_]{2,40}$/.test(code) ? ` (${code})` : '';
  return new UnavailableError(redact(`${provider} cannot be reached (${step})${why}; try again later`, secrets), 30);
}

/** The provider answered, but not with what we asked for (HTTP status, or an error it named). */
export function refusedByProvider(provider: string, step: string, status: number, said: string | null, secrets: readonly string[]) {
  const tail = said ? `: ${said}` : '';
  return new UnavailableError(
    redact(`${provider} refused the request (${step}, HTTP ${status})${tail}`, secrets),
    status >= 500 ? 30 : undefined,
  );
}

import { DomainError, isDomainError, TimeoutError, UnavailableError } from '../../errors.ts';

/**
 * What a failed call to a provider means for the caller, as a problem (never a 500):
 * - unreachable (connection refused, DNS) or a broken answer (5xx, not JSON) -> 503;
 * - no answer in time -> 504;
 * - the provider refused (invalid_grant, access_denied ...) or its answer failed our checks
 *   (ID token signature, issuer, nonce, state) -> 401 with the reason.
 */
export function providerFailure(provider: string, step: 'discovery' | 'authorization' | 'exchange' | 'profile', err: unknown): DomainError {
  if (isDomainError(err)) return err;
  const e = err as { name?: string; code?: string; message?: string; error?: string; cause?: unknown };
  const code = e?.code ?? '';
  if (code === 'OAUTH_TIMEOUT' || e?.name === 'TimeoutError' || e?.name === 'AbortError') {
    return new TimeoutError(`the OAuth provider ${provider} did not answer in time (${step}); try again later`);
  }
  if (
    err instanceof TypeError ||
    code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' ||
    code === 'OAUTH_RESPONSE_IS_NOT_JSON' ||
    step === 'discovery'
  ) {
    return new UnavailableError(`the OAuth provider ${provider} cannot be reached or answered unexpectedly (${step}); try again later`, 30);
  }
  if (code === 'OAUTH_RESPONSE_BODY_ERROR' || code === 'OAUTH_AUTHORIZATION_RESPONSE_ERROR') {
    const reason = typeof e.error === 'string' ? e.error : (e.message ?? 'refused');
    return new DomainError('unauthenticated', `the OAuth provider ${provider} refused the sign-in: ${reason.slice(0, 200)}`, undefined, {
      reason: 'provider_refused',
    });
  }
  return new DomainError(
    'unauthenticated',
    `the answer of the OAuth provider ${provider} failed validation: ${(e?.message ?? 'invalid').slice(0, 200)}`,
    undefined,
    {
      reason: 'provider_answer_invalid',
    },
  );
}

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
    return providerRefusal(provider, e.error);
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

/**
 * What we say when a provider answers with an OAuth error (RFC 6749 4.1.2.1 and 5.2, OpenID
 * Connect Core 3.1.2.6): a fixed sentence per listed code, never the provider's words. The
 * callback's query is whatever the browser brings (anyone can craft one), and its
 * `error_description` would otherwise reach the problem and the front end's return URL as our
 * text; the provider's words go to the log only.
 */
const CONFIGURATION = "it refused this installation's request: check the provider's configuration";
const REFUSALS: Record<string, string> = {
  access_denied: 'it was declined there',
  login_required: 'sign in there first',
  consent_required: 'give your consent there first',
  interaction_required: 'complete the step it asks for there first',
  account_selection_required: 'choose an account there first',
  temporarily_unavailable: 'it is temporarily unavailable; try again later',
  server_error: 'it failed; try again later',
  invalid_grant: 'the sign-in code was used, expired or not ours; start again',
  invalid_request: CONFIGURATION,
  invalid_client: CONFIGURATION,
  unauthorized_client: CONFIGURATION,
  unsupported_response_type: CONFIGURATION,
  unsupported_grant_type: CONFIGURATION,
  invalid_scope: CONFIGURATION,
};

/** The listed code of a provider's error, or 'other'. */
export const providerErrorCode = (error: unknown): string =>
  typeof error === 'string' && Object.hasOwn(REFUSALS, error) ? error : 'other';

/** 401 provider_refused with a fixed sentence (and the code, when listed) for a provider's error code. */
export function providerRefusal(provider: string, error: unknown): DomainError {
  const code = providerErrorCode(error);
  const said = code === 'other' ? '' : ` (${code}): ${REFUSALS[code]}`;
  return new DomainError('unauthenticated', `the OAuth provider ${provider} refused the sign-in${said}`, undefined, {
    reason: 'provider_refused',
    provider_error: code,
  });
}

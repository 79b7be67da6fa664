import type { OAuthSurface } from '@svc/db';
import { z } from 'zod';
import { recordAudit } from '../../audit/record-audit.ts';
import { DomainError, isDomainError, ValidationError } from '../../errors.ts';
import { anonymous, type DomainDeps } from '../../shared/context.ts';
import { enforceRateLimit } from '../rate-limit.ts';
import type { RequestMeta, TokenPair } from '../sessions.ts';
import type { IdentityView } from './identity-view.ts';
import { linkFromSettings } from './link-identity.ts';
import { consumeOAuthRequest, oauthRedirectUri } from './oauth-requests.ts';
import type { OAuthProfile } from './provider.ts';
import { providerOf } from './registry.ts';
import { type Refusal, signInWithProfile } from './sign-in-with-profile.ts';

/** The query a provider calls the callback with (RFC 6749 4.1.2, RFC 9207 `iss`), bounded. */
export const OAuthCallbackQuery = z.object({
  code: z.string().min(1).max(2048).optional(),
  state: z.string().min(1).max(256).optional(),
  iss: z.string().min(1).max(2048).optional(),
  error: z.string().min(1).max(256).optional(),
  error_description: z.string().max(1024).optional(),
});
export type OAuthCallbackQuery = z.output<typeof OAuthCallbackQuery>;

export type OAuthOutcome = { kind: 'session'; pair: TokenPair } | { kind: 'linked'; identity: IdentityView };

/**
 * The callback of either surface (spec 5.6): the state is taken once (unknown, used, expired
 * or of the other surface: refused), the code exchanged with the PKCE verifier for a profile,
 * then either the identity is linked to the subject who started from settings, or the user
 * signs in (or registers, on the portal) by the rules of sign-in-with-profile.ts. Every
 * failure is audited with its reason.
 */
export async function completeOAuth(
  deps: DomainDeps,
  surface: OAuthSurface,
  provider: string,
  query: OAuthCallbackQuery,
  meta: RequestMeta,
): Promise<OAuthOutcome> {
  const adapter = providerOf(deps.config, surface, provider);
  await enforceRateLimit(deps, 'oauth', deps.config.rate_limits.oauth, { ip: meta.ip });
  const method = `oauth:${provider}`;
  const fail = async (err: DomainError, reason: string, more: Record<string, unknown> = {}): Promise<never> => {
    await recordAudit(
      { ...deps, actor: anonymous(meta.ip, meta.userAgent) },
      {
        action: 'auth.login_failed',
        entity_type: (more.entity_type as string | undefined) ?? null,
        entity_id: (more.entity_id as string | undefined) ?? null,
        details: { surface, method, reason, ...(more.details as object | undefined) },
      },
    );
    throw err;
  };

  if (!query.state) return fail(new ValidationError('the callback has no state', { state: 'required' }), 'state_missing');
  const request = await consumeOAuthRequest(deps, surface, provider, query.state);
  if (!request) {
    return fail(
      new DomainError(
        'unauthenticated',
        'this sign-in is unknown, expired, already used or was started elsewhere; start again',
        undefined,
        {
          reason: 'state_invalid',
        },
      ),
      'state_invalid',
    );
  }
  if (query.error) {
    return fail(
      new DomainError(
        'unauthenticated',
        `the OAuth provider ${provider} answered ${query.error}${query.error_description ? `: ${query.error_description.slice(0, 200)}` : ''}`,
        undefined,
        {
          reason: 'provider_refused',
        },
      ),
      'provider_refused',
      { details: { error: query.error } },
    );
  }
  if (!query.code) return fail(new ValidationError('the callback has no code', { code: 'required' }), 'code_missing');

  const redirectUri = oauthRedirectUri(deps.config, surface, provider);
  const callbackUrl = new URL(redirectUri);
  callbackUrl.searchParams.set('code', query.code);
  callbackUrl.searchParams.set('state', query.state);
  if (query.iss) callbackUrl.searchParams.set('iss', query.iss);
  let profile: OAuthProfile;
  try {
    profile = await adapter.exchange({
      callbackUrl,
      state: query.state,
      codeVerifier: request.code_verifier,
      nonce: request.nonce,
      redirectUri,
    });
  } catch (err) {
    if (!isDomainError(err)) throw err;
    return fail(err, String(err.extra?.reason ?? err.type));
  }

  if (request.link_subject_id) {
    return { kind: 'linked', identity: await linkFromSettings(deps, surface, provider, request.link_subject_id, profile, meta) };
  }

  const outcome = await signInWithProfile(deps, surface, provider, profile, meta);
  if ('pair' in outcome) return { kind: 'session', pair: outcome.pair };
  return fail(refusalError(outcome.refused), outcome.refused.reason, {
    entity_type: outcome.refused.subjectId ? (surface === 'admin' ? 'admin' : 'client') : null,
    entity_id: outcome.refused.subjectId ?? null,
    details: { email: profile.email, email_verified: profile.email_verified },
  });
}

const refusalError = (r: Refusal): DomainError => new DomainError(r.status, r.message, undefined, { reason: r.reason });

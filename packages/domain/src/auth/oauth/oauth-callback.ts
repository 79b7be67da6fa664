import type { OAuthSurface } from '@svc/db';
import { z } from 'zod';
import { recordAudit } from '../../audit/record-audit.ts';
import { DomainError, isDomainError, ValidationError } from '../../errors.ts';
import { anonymous, type DomainDeps } from '../../shared/context.ts';
import { enforceRateLimit } from '../rate-limit.ts';
import type { RequestMeta, TokenPair } from '../sessions.ts';
import { browserMatches } from './browser-binding.ts';
import type { IdentityView } from './identity-view.ts';
import { linkFromSettings } from './link-identity.ts';
import { consumeOAuthRequest, oauthRedirectUri } from './oauth-requests.ts';
import type { OAuthProfile } from './provider.ts';
import { providerErrorCode, providerRefusal } from './provider-errors.ts';
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

/** What the browser brought to the callback besides the query. */
export interface CallbackBrowser {
  /** The values of the surface's binding cookie it sent (browser-binding.ts); none: another browser. */
  keys: readonly string[];
  /** Its Authorization header, when a front end forwarding the query sent one. */
  authorization?: string | undefined;
}

/**
 * The callback of either surface (spec 5.6): the state is taken once (unknown, used, expired
 * or of the other surface: refused), the browser must be the one that started it (its cookie,
 * browser-binding.ts), the code exchanged with the PKCE verifier for a profile, then either the
 * identity is linked to the subject who started from settings (only while that session is
 * live, and only for it when the caller shows a token), or the user signs in (or registers, on
 * the portal) by the rules of sign-in-with-profile.ts. Every failure is audited with its reason.
 */
export async function completeOAuth(
  deps: DomainDeps,
  surface: OAuthSurface,
  provider: string,
  query: OAuthCallbackQuery,
  meta: RequestMeta,
  browser: CallbackBrowser,
): Promise<OAuthOutcome> {
  const adapter = providerOf(deps, surface, provider);
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
  if (!browserMatches(request.browser_hash, browser.keys)) {
    return fail(
      new DomainError(
        'unauthenticated',
        'this sign-in was started in another browser, or this browser did not keep its cookie; start again in this browser',
        undefined,
        { reason: 'browser_mismatch' },
      ),
      'browser_mismatch',
    );
  }
  if (request.link_subject_id && browser.authorization !== undefined) {
    const other = await otherSession(deps, surface, browser.authorization, request);
    if (other) return fail(other, 'link_session_mismatch', { entity_type: subjectType(surface), entity_id: request.link_subject_id });
  }
  if (query.error) {
    // The provider's words (or whoever crafted the query) go to the log, never to the answer.
    deps.log.info(
      { surface, provider, error: query.error, error_description: query.error_description },
      'the OAuth provider answered the callback with an error',
    );
    return fail(providerRefusal(provider, query.error), 'provider_refused', { details: { error: providerErrorCode(query.error) } });
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
    const link = { subjectId: request.link_subject_id, sessionId: request.link_session_id };
    try {
      return { kind: 'linked', identity: await linkFromSettings(deps, surface, provider, link, profile, meta) };
    } catch (err) {
      const reason = isDomainError(err) ? err.extra?.reason : undefined;
      if (typeof reason !== 'string') throw err;
      return fail(err as DomainError, reason, { entity_type: subjectType(surface), entity_id: link.subjectId });
    }
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

const subjectType = (surface: OAuthSurface) => (surface === 'admin' ? 'admin' : 'client');

/**
 * A link completes only in the session that asked for it: a front end that forwards the query
 * with a token must show that session's (another session, another subject or a token that does
 * not verify: refused, nothing linked). Null when it is that session.
 */
async function otherSession(
  deps: DomainDeps,
  surface: OAuthSurface,
  authorization: string,
  request: { link_subject_id: string | null; link_session_id: string | null },
): Promise<DomainError | null> {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  const claims = m ? await deps.tokens.verifyAccess(m[1] as string, surface).catch(() => null) : null;
  if (claims && claims.sub === request.link_subject_id && claims.sid === request.link_session_id) return null;
  return new DomainError(
    'forbidden',
    'this link was asked for in another session; start it again from the account you are signed in to',
    undefined,
    {
      reason: 'link_session_mismatch',
    },
  );
}

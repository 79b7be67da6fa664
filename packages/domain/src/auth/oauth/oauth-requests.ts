import { createHash } from 'node:crypto';
import type { Config } from '@svc/config';
import type { OAuthRequestRow, OAuthSurface } from '@svc/db';
import type { DomainDeps } from '../../shared/context.ts';
import { publicBaseUrl } from '../../shared/public-url.ts';
import { randomToken, sha256Hex } from '../../shared/secrets.ts';
import { enforceRateLimit } from '../rate-limit.ts';
import type { RequestMeta } from '../sessions.ts';
import { providerOf } from './registry.ts';

/** An authorization request is valid this long between the redirect and the callback. */
export const OAUTH_REQUEST_TTL_SECONDS = 600;

/** Spec 5.6 rule 6: each surface has its own redirect URIs, under the public base URL. */
export function oauthRedirectUri(config: Pick<Config, 'http'>, surface: OAuthSurface, provider: string): string {
  const prefix = surface === 'admin' ? '/api/v1' : '/portal/v1';
  return `${publicBaseUrl(config)}${prefix}/auth/oauth/${encodeURIComponent(provider)}/callback`;
}

/** Who links an identity from settings: the signed-in subject and the session it asked in. */
export interface LinkRequester {
  subjectId: string;
  sessionId: string;
}

/** The provider's consent URL, and the value for the starting browser's cookie (browser-binding.ts). */
export interface OAuthStarted {
  url: URL;
  browserKey: string;
}

/**
 * Starts an authorization: 32 random bytes of state (only its SHA-256 is stored), a PKCE
 * verifier (S256) and a nonce, kept 10 minutes for one callback, bound to the starting browser
 * by 32 more random bytes (its cookie; only the SHA-256 is stored); answers the provider's
 * consent URL and that value. `link`: a signed-in subject linking an identity from settings.
 */
export async function startOAuth(
  deps: DomainDeps,
  surface: OAuthSurface,
  provider: string,
  meta: RequestMeta,
  link: LinkRequester | null = null,
): Promise<OAuthStarted> {
  const linkSubjectId = link?.subjectId ?? null;
  const adapter = providerOf(deps, surface, provider);
  const limits = deps.config.rate_limits.oauth;
  await enforceRateLimit(deps, 'oauth', limits, { ip: meta.ip, subject: linkSubjectId ? `${surface}:${linkSubjectId}` : null });
  const state = randomToken(32);
  // PKCE (RFC 7636): a 43-character verifier and its S256 challenge; the nonce the same size.
  const codeVerifier = randomToken(32);
  const nonce = randomToken(32);
  const redirectUri = oauthRedirectUri(deps.config, surface, provider);
  // Built before anything is stored: a provider that cannot be reached leaves no row behind.
  const url = await adapter.authorizationUrl({
    state,
    codeChallenge: createHash('sha256').update(codeVerifier).digest('base64url'),
    nonce,
    redirectUri,
  });
  const now = deps.clock.now();
  const browserKey = randomToken(32);
  await deps.db
    .insertInto('oauth_requests')
    .values({
      state_hash: sha256Hex(state),
      surface,
      provider,
      code_verifier: codeVerifier,
      nonce,
      link_subject_id: linkSubjectId,
      created_at: now,
      link_session_id: link?.sessionId ?? null,
      browser_hash: sha256Hex(browserKey),
      expires_at: new Date(now.getTime() + OAUTH_REQUEST_TTL_SECONDS * 1000),
      used_at: null,
    })
    .execute();
  return { url, browserKey };
}

/**
 * Takes the request of a callback's state, once: marks it used in one statement, so of two
 * callbacks with one state only one gets it. Unknown, used, expired, or of another surface or
 * provider: null.
 */
export async function consumeOAuthRequest(
  deps: DomainDeps,
  surface: OAuthSurface,
  provider: string,
  state: string,
): Promise<OAuthRequestRow | null> {
  const now = deps.clock.now();
  const row = await deps.db
    .updateTable('oauth_requests')
    .set({ used_at: now })
    .where('state_hash', '=', sha256Hex(state))
    .where('surface', '=', surface)
    .where('provider', '=', provider)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
  return row ?? null;
}

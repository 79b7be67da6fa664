import type { Config } from '@svc/config';
import type { OAuthSurface } from '@svc/db';
import type { DomainError } from '../../errors.ts';
import type { OAuthOutcome } from './oauth-callback.ts';

/** The front-end URL the callback redirects to, when the surface has one (auth.oauth_return_url / portal_auth.oauth_return_url). */
export const oauthReturnUrl = (config: Config, surface: OAuthSurface): string | undefined =>
  surface === 'admin' ? config.auth.oauth_return_url : config.portal_auth.oauth_return_url;

/**
 * Where the browser goes after the callback with a return URL configured: the answer in the
 * URL fragment (never sent to any server, kept out of logs and Referer): the token pair's
 * members, or `linked=<provider>`, or `error=<problem slug>&error_description=...`.
 */
export function oauthReturnLocation(base: string, result: { ok: OAuthOutcome } | { error: DomainError }): string {
  const url = new URL(base);
  const fragment = new URLSearchParams();
  if ('error' in result) {
    fragment.set('error', result.error.type);
    if (typeof result.error.extra?.reason === 'string') fragment.set('reason', result.error.extra.reason);
    fragment.set('error_description', result.error.message);
  } else if (result.ok.kind === 'session') {
    for (const [k, v] of Object.entries(result.ok.pair)) fragment.set(k, String(v));
  } else {
    fragment.set('linked', result.ok.identity.provider);
  }
  url.hash = fragment.toString();
  return url.toString();
}

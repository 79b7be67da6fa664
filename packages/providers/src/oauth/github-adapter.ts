import {
  type AuthorizationRequest,
  type CodeExchange,
  DomainError,
  normalEmail,
  type OAuthProfile,
  type OAuthProviderAdapter,
  type OutboundFetch,
  PROVIDER_TIMEOUT_SECONDS,
  providerFailure,
} from '@svc/domain';
import * as oidc from 'openid-client';
import { isLoopbackHttp } from './oidc-adapter.ts';

export const GITHUB_DEFAULTS = {
  authorizationEndpoint: 'https://github.com/login/oauth/authorize',
  tokenEndpoint: 'https://github.com/login/oauth/access_token',
  /** The API's /user; the emails are read at `${userinfo}/emails`. */
  userinfoEndpoint: 'https://api.github.com/user',
  scopes: ['read:user', 'user:email'],
};

export interface GithubAdapterOptions {
  name: string;
  clientId: string;
  clientSecret: string;
  authorizationEndpoint?: string | undefined;
  tokenEndpoint?: string | undefined;
  userinfoEndpoint?: string | undefined;
  scopes?: string[] | undefined;
  /** Per outbound call; default PROVIDER_TIMEOUT_SECONDS. */
  timeoutSeconds?: number;
  /** Every request (token, user, emails) goes through the outbound client: the destination policy. */
  fetch: OutboundFetch;
}

interface GithubEmail {
  email?: unknown;
  primary?: unknown;
  verified?: unknown;
}

/**
 * GitHub is OAuth 2 without OpenID Connect: the code grant (with PKCE) is openid-client's;
 * the profile is GitHub's API: the id from GET /user, the email and whether it is verified
 * from the primary entry of GET /user/emails (the address on /user is whatever the user made
 * public and says nothing about verification).
 */
export function githubAdapter(o: GithubAdapterOptions): OAuthProviderAdapter {
  const endpoints = {
    authorization: o.authorizationEndpoint ?? GITHUB_DEFAULTS.authorizationEndpoint,
    token: o.tokenEndpoint ?? GITHUB_DEFAULTS.tokenEndpoint,
    user: (o.userinfoEndpoint ?? GITHUB_DEFAULTS.userinfoEndpoint).replace(/\/+$/, ''),
  };
  const config = new oidc.Configuration(
    { issuer: new URL(endpoints.authorization).origin, authorization_endpoint: endpoints.authorization, token_endpoint: endpoints.token },
    o.clientId,
    o.clientSecret,
  );
  const timeout = o.timeoutSeconds ?? PROVIDER_TIMEOUT_SECONDS;
  config.timeout = timeout;
  config[oidc.customFetch] = o.fetch;
  if ([endpoints.authorization, endpoints.token].some(isLoopbackHttp)) oidc.allowInsecureRequests(config);
  const scopes = o.scopes ?? GITHUB_DEFAULTS.scopes;

  return {
    name: o.name,
    kind: 'oauth2',
    async authorizationUrl(req: AuthorizationRequest): Promise<URL> {
      return oidc.buildAuthorizationUrl(config, {
        redirect_uri: req.redirectUri,
        scope: scopes.join(' '),
        state: req.state,
        code_challenge: req.codeChallenge,
        code_challenge_method: 'S256',
        allow_signup: 'false',
      });
    },
    async exchange(req: CodeExchange): Promise<OAuthProfile> {
      let accessToken: string;
      try {
        const tokens = await oidc.authorizationCodeGrant(config, req.callbackUrl, {
          pkceCodeVerifier: req.codeVerifier,
          expectedState: req.state,
        });
        accessToken = tokens.access_token;
      } catch (err) {
        throw providerFailure(o.name, 'exchange', err);
      }
      const user = (await githubGet(o.fetch, o.name, endpoints.user, accessToken, timeout)) as { id?: unknown };
      const emails = await githubGet(o.fetch, o.name, `${endpoints.user}/emails`, accessToken, timeout);
      return githubProfile(o.name, user, emails);
    },
  };
}

/** The profile from GET /user and GET /user/emails: the primary email and its verified flag. */
export function githubProfile(provider: string, user: { id?: unknown }, emails: unknown): OAuthProfile {
  const id = typeof user.id === 'number' || typeof user.id === 'string' ? String(user.id) : '';
  if (!id || id.length > 255)
    throw new DomainError('unauthenticated', `the OAuth provider ${provider} gave no user id`, undefined, {
      reason: 'provider_answer_invalid',
    });
  const list = Array.isArray(emails) ? (emails as GithubEmail[]) : [];
  const primary = list.find((e) => e && e.primary === true);
  const email = normalEmail(primary?.email);
  return { provider_user_id: id, email, email_verified: email !== null && primary?.verified === true };
}

async function githubGet(fetch: OutboundFetch, provider: string, url: string, token: string, timeoutSeconds: number): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { authorization: `Bearer ${token}`, accept: 'application/vnd.github+json', 'user-agent': 'svc-control-plane' },
      signal: AbortSignal.timeout(timeoutSeconds * 1000),
    });
  } catch (err) {
    throw providerFailure(provider, 'profile', err);
  }
  if (!res.ok) {
    await res.body?.cancel();
    if (res.status >= 500) throw providerFailure(provider, 'profile', new TypeError(`HTTP ${res.status}`));
    throw new DomainError('unauthenticated', `the OAuth provider ${provider} refused to give the profile (HTTP ${res.status})`, undefined, {
      reason: 'provider_refused',
    });
  }
  const text = await res.text();
  if (text.length > 1_000_000) throw providerFailure(provider, 'profile', new TypeError('profile too large'));
  try {
    return JSON.parse(text);
  } catch (err) {
    throw providerFailure(provider, 'profile', new TypeError(`not JSON: ${(err as Error).message}`));
  }
}

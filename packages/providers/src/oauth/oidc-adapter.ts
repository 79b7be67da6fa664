import {
  type AuthorizationRequest,
  type CodeExchange,
  DomainError,
  isVerified,
  normalEmail,
  type OAuthProfile,
  type OAuthProviderAdapter,
  type OutboundFetch,
  PROVIDER_TIMEOUT_SECONDS,
  providerFailure,
} from '@svc/domain';
import * as oidc from 'openid-client';

/** What an OpenID Connect (or plain OAuth 2 with a userinfo endpoint) adapter is made from. */
export interface OidcAdapterOptions {
  name: string;
  clientId: string;
  clientSecret: string;
  /** With an issuer and no explicit endpoints: discovery (/.well-known/openid-configuration). */
  issuer?: string | undefined;
  authorizationEndpoint?: string | undefined;
  tokenEndpoint?: string | undefined;
  userinfoEndpoint?: string | undefined;
  scopes: string[];
  /** Per outbound call; default PROVIDER_TIMEOUT_SECONDS. */
  timeoutSeconds?: number;
  /** Every request (discovery, token, userinfo, keys) goes through the outbound client: the destination policy. */
  fetch: OutboundFetch;
}

/**
 * Plain http is accepted for loopback providers only (local development and tests); any
 * other provider must be https, as openid-client insists by default.
 */
export function isLoopbackHttp(url: string | undefined): boolean {
  if (!url) return false;
  const u = new URL(url);
  return u.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);
}

/**
 * Generic OpenID Connect (and Google, which is one with a fixed issuer). Protocol work is
 * openid-client's (discovery, PKCE, the code grant, the ID token's signature, issuer,
 * audience, expiry and nonce, the `iss` authorization response parameter, userinfo): a
 * maintained, certified implementation instead of hand-written protocol code.
 *
 * Configuration: discovery is fetched on first use and kept; a failed discovery is not kept,
 * so the next sign-in tries again. Without an issuer, explicit authorization, token and
 * userinfo endpoints make a plain OAuth 2 provider whose profile comes from userinfo.
 */
export function oidcAdapter(o: OidcAdapterOptions): OAuthProviderAdapter {
  const kind: 'oidc' | 'oauth2' = o.issuer ? 'oidc' : 'oauth2';
  const insecure = [o.issuer, o.authorizationEndpoint, o.tokenEndpoint, o.userinfoEndpoint].some(isLoopbackHttp);
  const execute = insecure ? [oidc.allowInsecureRequests] : [];
  let configuration: Promise<oidc.Configuration> | undefined;

  const explicit = Boolean(o.authorizationEndpoint && o.tokenEndpoint);
  async function load(): Promise<oidc.Configuration> {
    let config: oidc.Configuration;
    if (explicit) {
      config = new oidc.Configuration(
        {
          issuer: o.issuer ?? new URL(o.authorizationEndpoint as string).origin,
          authorization_endpoint: o.authorizationEndpoint,
          token_endpoint: o.tokenEndpoint,
          ...(o.userinfoEndpoint ? { userinfo_endpoint: o.userinfoEndpoint } : {}),
        },
        o.clientId,
        o.clientSecret,
      );
      for (const fn of execute) fn(config);
    } else {
      try {
        config = await oidc.discovery(new URL(o.issuer as string), o.clientId, o.clientSecret, undefined, {
          execute,
          timeout: o.timeoutSeconds ?? PROVIDER_TIMEOUT_SECONDS,
          [oidc.customFetch]: o.fetch,
        });
      } catch (err) {
        throw providerFailure(o.name, 'discovery', err);
      }
    }
    config.timeout = o.timeoutSeconds ?? PROVIDER_TIMEOUT_SECONDS;
    config[oidc.customFetch] = o.fetch;
    return config;
  }
  function configured(): Promise<oidc.Configuration> {
    if (!configuration) {
      configuration = load();
      configuration.catch(() => {
        configuration = undefined;
      });
    }
    return configuration;
  }

  return {
    name: o.name,
    kind,
    async authorizationUrl(req: AuthorizationRequest): Promise<URL> {
      const config = await configured();
      return oidc.buildAuthorizationUrl(config, {
        redirect_uri: req.redirectUri,
        scope: o.scopes.join(' '),
        response_type: 'code',
        state: req.state,
        code_challenge: req.codeChallenge,
        code_challenge_method: 'S256',
        ...(kind === 'oidc' ? { nonce: req.nonce } : {}),
      });
    },
    async exchange(req: CodeExchange): Promise<OAuthProfile> {
      const config = await configured();
      let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
      try {
        tokens = await oidc.authorizationCodeGrant(config, req.callbackUrl, {
          pkceCodeVerifier: req.codeVerifier,
          expectedState: req.state,
          ...(kind === 'oidc' ? { expectedNonce: req.nonce, idTokenExpected: true } : {}),
        });
      } catch (err) {
        throw providerFailure(o.name, 'exchange', err);
      }
      const claims = tokens.claims();
      let profile: Record<string, unknown> = { ...(claims ?? {}) };
      // Many providers (and OpenID Connect by default) give email claims only at userinfo.
      const hasUserinfo = Boolean(config.serverMetadata().userinfo_endpoint);
      if (hasUserinfo && (!claims || claims.email === undefined || claims.email_verified === undefined)) {
        try {
          const info = await oidc.fetchUserInfo(config, tokens.access_token, claims?.sub ?? oidc.skipSubjectCheck);
          profile = { ...profile, ...info };
        } catch (err) {
          throw providerFailure(o.name, 'profile', err);
        }
      }
      const sub = profile.sub;
      if (typeof sub !== 'string' || !sub || sub.length > 255) {
        throw new DomainError('unauthenticated', `the OAuth provider ${o.name} gave no user id`, undefined, {
          reason: 'provider_answer_invalid',
        });
      }
      return { provider_user_id: sub, email: normalEmail(profile.email), email_verified: isVerified(profile.email_verified) };
    },
  };
}

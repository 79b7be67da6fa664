import { GOOGLE_ISSUER, type OAuthAdapterFactory } from '@svc/domain';
import { githubAdapter } from './github-adapter.ts';
import { oidcAdapter } from './oidc-adapter.ts';

const OIDC_SCOPES = ['openid', 'email', 'profile'];

/**
 * The adapter for a configured provider, by name (the domain's OAuthAdapterFactory): `github` is
 * GitHub, `google` is Google's OpenID Connect (issuer https://accounts.google.com unless
 * overridden), any other name is a generic OpenID Connect provider (issuer, or explicit
 * endpoints). Its requests go through `fetch`, the outbound client's (the destination policy
 * applies to configured endpoints too).
 */
export const oauthProviderAdapter: OAuthAdapterFactory = (name, p, fetch) => {
  const base = { name, clientId: p.client_id, clientSecret: p.client_secret, fetch };
  const endpoints = {
    authorizationEndpoint: p.authorization_endpoint,
    tokenEndpoint: p.token_endpoint,
    userinfoEndpoint: p.userinfo_endpoint,
  };
  if (name === 'github') return githubAdapter({ ...base, ...endpoints, scopes: p.scopes });
  const issuer = p.issuer ?? (name === 'google' ? GOOGLE_ISSUER : undefined);
  return oidcAdapter({ ...base, ...endpoints, issuer, scopes: p.scopes ?? OIDC_SCOPES });
};

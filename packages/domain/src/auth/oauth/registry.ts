import type { Config, OAuthProviderConfig } from '@svc/config';
import type { OAuthSurface } from '@svc/db';
import { NotFoundError } from '../../errors.ts';
import type { DomainDeps } from '../../shared/context.ts';
import type { OutboundFetch } from '../../shared/outbound.ts';
import { githubAdapter } from './github-adapter.ts';
import { oidcAdapter } from './oidc-adapter.ts';
import type { OAuthProviderAdapter } from './provider.ts';

export const GOOGLE_ISSUER = 'https://accounts.google.com';
const OIDC_SCOPES = ['openid', 'email', 'profile'];

/** The configured providers of a surface (spec 5.9: auth.oauth for admins, portal_auth.oauth for clients). */
export const surfaceProviders = (config: Config, surface: OAuthSurface): Record<string, OAuthProviderConfig> =>
  surface === 'admin' ? config.auth.oauth : config.portal_auth.oauth;

/**
 * The adapter for a configured provider, by name: `github` is GitHub, `google` is Google's
 * OpenID Connect (issuer https://accounts.google.com unless overridden), any other name is a
 * generic OpenID Connect provider (issuer, or explicit endpoints). Its requests go through
 * `fetch`, the outbound client's (the destination policy applies to configured endpoints too).
 */
export function adapterFor(name: string, p: OAuthProviderConfig, fetch: OutboundFetch): OAuthProviderAdapter {
  const base = { name, clientId: p.client_id, clientSecret: p.client_secret, fetch };
  const endpoints = {
    authorizationEndpoint: p.authorization_endpoint,
    tokenEndpoint: p.token_endpoint,
    userinfoEndpoint: p.userinfo_endpoint,
  };
  if (name === 'github') return githubAdapter({ ...base, ...endpoints, scopes: p.scopes });
  const issuer = p.issuer ?? (name === 'google' ? GOOGLE_ISSUER : undefined);
  return oidcAdapter({ ...base, ...endpoints, issuer, scopes: p.scopes ?? OIDC_SCOPES });
}

// One registry per configuration object (one installation; several in tests), built lazily:
// an adapter keeps its discovered configuration for the life of the process.
const registries = new WeakMap<object, Map<string, OAuthProviderAdapter>>();

/** Spec 5.9 rule 1: an unconfigured provider's routes are 404, as if they did not exist. */
export function providerOf(deps: Pick<DomainDeps, 'config' | 'outbound'>, surface: OAuthSurface, name: string): OAuthProviderAdapter {
  const providers = surfaceProviders(deps.config, surface);
  if (!Object.hasOwn(providers, name)) throw new NotFoundError('route');
  let registry = registries.get(providers);
  if (!registry) {
    registry = new Map();
    registries.set(providers, registry);
  }
  let adapter = registry.get(name);
  if (!adapter) {
    adapter = adapterFor(name, providers[name] as OAuthProviderConfig, deps.outbound.fetch());
    registry.set(name, adapter);
  }
  return adapter;
}

/** The gate of every route of a provider: 404 unless configured on that surface. */
export function assertProviderConfigured(config: Config, surface: OAuthSurface, name: string): void {
  if (!Object.hasOwn(surfaceProviders(config, surface), name)) throw new NotFoundError('route');
}

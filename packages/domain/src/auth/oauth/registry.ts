import type { Config, OAuthProviderConfig } from '@svc/config';
import type { OAuthSurface } from '@svc/db';
import { NotFoundError } from '../../errors.ts';
import type { DomainDeps } from '../../shared/context.ts';
import type { OAuthProviderAdapter } from './provider.ts';

export const GOOGLE_ISSUER = 'https://accounts.google.com';

/** The configured providers of a surface (spec 5.9: auth.oauth for admins, portal_auth.oauth for clients). */
export const surfaceProviders = (config: Config, surface: OAuthSurface): Record<string, OAuthProviderConfig> =>
  surface === 'admin' ? config.auth.oauth : config.portal_auth.oauth;

/** Spec 5.9 rule 1: an unconfigured provider's routes are 404, as if they did not exist. */
export function providerOf(
  deps: Pick<DomainDeps, 'config' | 'outbound' | 'vendors'>,
  surface: OAuthSurface,
  name: string,
): OAuthProviderAdapter {
  const providers = surfaceProviders(deps.config, surface);
  if (!Object.hasOwn(providers, name)) throw new NotFoundError('route');
  // The vendors keep each adapter for the life of the runtime (its discovered configuration with it).
  return deps.vendors.oauthProvider(name, providers[name] as OAuthProviderConfig, deps.outbound.fetch());
}

/** The gate of every route of a provider: 404 unless configured on that surface. */
export function assertProviderConfigured(config: Config, surface: OAuthSurface, name: string): void {
  if (!Object.hasOwn(surfaceProviders(config, surface), name)) throw new NotFoundError('route');
}

import type { OAuthProviderConfig } from '@svc/config';
import type { OutboundFetch } from '../../shared/outbound.ts';
import { Email } from '../credential-fields.ts';

/**
 * The OAuth provider port (spec 5.6): two operations, one adapter per kind of provider
 * (generic OpenID Connect, Google, GitHub), vendor clients in @svc/providers. The registry
 * (registry.ts) builds them from configuration through DomainDeps.vendors.oauthProvider: a
 * provider is enabled exactly when it is configured.
 */

/** Spec 2.2 "OAuth profile (internal)". */
export interface OAuthProfile {
  provider_user_id: string;
  /** By the Email rule (normalEmail), lower-cased; null when the provider gave none or one the rule refuses. */
  email: string | null;
  /** True only when the provider says so explicitly. */
  email_verified: boolean;
}

export interface AuthorizationRequest {
  /** The state value sent to the provider (only its SHA-256 is stored). */
  state: string;
  /** PKCE S256 challenge of the stored verifier. */
  codeChallenge: string;
  nonce: string;
  redirectUri: string;
}

export interface CodeExchange {
  /** The callback URL as the provider called it (redirect URI plus code, state, iss ...). */
  callbackUrl: URL;
  state: string;
  codeVerifier: string;
  nonce: string;
  redirectUri: string;
}

export interface OAuthProviderAdapter {
  readonly name: string;
  /** 'oidc' (ID token checked, nonce bound) or 'oauth2' (profile from the provider's API). */
  readonly kind: 'oidc' | 'oauth2';
  /** The provider's consent screen URL for this request (discovery on first use). */
  authorizationUrl(req: AuthorizationRequest): Promise<URL>;
  /** Exchanges the code (with the PKCE verifier) and reads the profile. */
  exchange(req: CodeExchange): Promise<OAuthProfile>;
}

/** Seconds every outbound call to a provider may take. */
export const PROVIDER_TIMEOUT_SECONDS = 10;

/** `email_verified` counts only when it is true (some providers send the string "true"). */
export const isVerified = (v: unknown): boolean => v === true || v === 'true';

/**
 * A provider's email by the one Email rule of every surface (credential-fields.ts: one ASCII
 * address, checked before lower-casing); anything else (markup, a list, a header line, a
 * Unicode look-alike) counts as no email, the path a provider that gives none takes.
 */
export function normalEmail(v: unknown): string | null {
  const parsed = Email.safeParse(v);
  return parsed.success ? parsed.data : null;
}

/**
 * The profile as the sign-in and link verbs use it, whatever adapter made it: the email by
 * normalEmail, and email_verified only for an email that passed.
 */
export function checkedProfile(p: OAuthProfile): OAuthProfile {
  const email = normalEmail(p.email);
  return { provider_user_id: p.provider_user_id, email, email_verified: email !== null && p.email_verified === true };
}

/** Builds the adapter of a configured provider by its name (@svc/providers `oauthProviderAdapter`); its requests go through `fetch`. */
export type OAuthAdapterFactory = (name: string, config: OAuthProviderConfig, fetch: OutboundFetch) => OAuthProviderAdapter;

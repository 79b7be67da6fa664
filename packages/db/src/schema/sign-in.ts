import type { ColumnType, Selectable } from 'kysely';

/** Spec 3.3: a magic-link token, kept only as its SHA-256. */
export interface MagicLinkTokensTable {
  token_hash: string;
  client_id: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
  /**
   * A password registration's confirmation link only: the Argon2id hash chosen at registration,
   * applied when this link is what confirms the email (docs/portal.md); null on every other link.
   */
  password_hash: ColumnType<string | null, string | null | undefined, string | null>;
  /**
   * With password_hash: the SHA-256 of the random value the registering browser keeps in its
   * cookie; the password is applied only when that browser redeems the link.
   */
  browser_hash: ColumnType<string | null, string | null | undefined, string | null>;
}

/** Spec 2.2 admin_oauth_identity: a provider's user linked to an admin. */
export interface AdminOAuthIdentitiesTable {
  provider: string;
  provider_user_id: string;
  admin_id: string;
  /** The email the provider gave when the identity was linked. */
  email: string | null;
  created_at: Date;
  last_used_at: Date | null;
}

/** Spec 2.2 client_oauth_identity: a provider's user linked to a client (the portal's own records). */
export interface ClientOAuthIdentitiesTable {
  provider: string;
  provider_user_id: string;
  client_id: string;
  email: string | null;
  created_at: Date;
  last_used_at: Date | null;
}

export type OAuthSurface = 'admin' | 'client';

/** An OAuth authorization request between redirect and callback (single use, short-lived). */
export interface OAuthRequestsTable {
  /** SHA-256 of the state value sent to the provider. */
  state_hash: string;
  surface: OAuthSurface;
  provider: string;
  code_verifier: string;
  nonce: string;
  /** Set when a signed-in subject links an identity from settings. */
  link_subject_id: string | null;
  /** The session that asked for the link (the callback links only while it is live). */
  link_session_id: string | null;
  /** SHA-256 of the random value in the starting browser's cookie; null only for requests from before it existed. */
  browser_hash: string | null;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}
export type OAuthRequestRow = Selectable<OAuthRequestsTable>;

/** A domain event in the outbox (spec 6), dispatched by the worker. */
export interface EventsTable {
  id: string;
  type: string;
  payload: ColumnType<Record<string, unknown>, string, string>;
  occurred_at: Date;
  dispatched_at: Date | null;
}
export type EventRow = Selectable<EventsTable>;

import type { ColumnType, Generated, Selectable } from 'kysely';

export type AdminRole = 'owner' | 'admin' | 'viewer';

export interface AdminsTable {
  id: string;
  email: string;
  password_hash: string | null;
  role: AdminRole;
  created_at: Date;
  updated_at: Date;
  last_login_at: Date | null;
  /** Bumped by a password change or reset: access tokens of an older generation are refused. */
  token_generation: Generated<number>;
}
export type AdminRow = Selectable<AdminsTable>;

/** An address an admin signed in from successfully (hashed with the admin id); a few per admin. */
export interface AdminKnownAddressesTable {
  admin_id: string;
  address_hash: string;
  last_success_at: Date;
}

export interface SetupTokensTable {
  token_hash: string;
  created_at: Date;
}

/** A named API token of an admin (auth/api-tokens.ts). */
export interface ApiTokensTable {
  id: string;
  name: string;
  admin_id: string;
  scopes: ColumnType<string[], string, string>;
  token_hash: string;
  prefix: string;
  allowed_ips: ColumnType<string[] | null, string | null, string | null>;
  expires_at: Date | null;
  last_used_at: Date | null;
  last_used_ip: string | null;
  revoked_at: Date | null;
  created_at: Date;
}

import type { Generated, Selectable } from 'kysely';

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

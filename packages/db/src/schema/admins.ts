import type { Selectable } from 'kysely';

export type AdminRole = 'owner' | 'admin' | 'viewer';

export interface AdminsTable {
  id: string;
  email: string;
  password_hash: string | null;
  role: AdminRole;
  created_at: Date;
  updated_at: Date;
  last_login_at: Date | null;
}
export type AdminRow = Selectable<AdminsTable>;

export interface SetupTokensTable {
  token_hash: string;
  created_at: Date;
}

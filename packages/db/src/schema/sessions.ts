import type { Selectable } from 'kysely';

export type SubjectType = 'admin' | 'client';

export interface SessionsTable {
  id: string;
  subject_type: SubjectType;
  subject_id: string;
  /** The sign-in method that opened the session: password, oauth:<provider>, magic_link, setup. */
  method: string;
  ip: string | null;
  user_agent: string | null;
  created_at: Date;
  expires_at: Date;
  refreshed_at: Date | null;
  revoked_at: Date | null;
  revoked_reason: string | null;
}
export type SessionRow = Selectable<SessionsTable>;

export interface RefreshTokensTable {
  /** hex SHA-256 of the 32 random bytes handed out; the token itself is never stored. */
  token_hash: string;
  session_id: string;
  issued_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

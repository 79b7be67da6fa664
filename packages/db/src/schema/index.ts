import type { AdminsTable, SetupTokensTable } from './admins.ts';
import type { AuditLogTable } from './audit-log.ts';
import type { InstallationTable, SigningKeysTable } from './installation.ts';
import type { RefreshTokensTable, SessionsTable } from './sessions.ts';

export interface Database {
  installation: InstallationTable;
  signing_keys: SigningKeysTable;
  admins: AdminsTable;
  setup_tokens: SetupTokensTable;
  sessions: SessionsTable;
  refresh_tokens: RefreshTokensTable;
  audit_log: AuditLogTable;
}

export type * from './admins.ts';
export type * from './audit-log.ts';
export type * from './installation.ts';
export type * from './sessions.ts';

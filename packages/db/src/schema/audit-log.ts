import type { ColumnType, Selectable } from 'kysely';

export type ActorType = 'admin' | 'client' | 'system' | 'anonymous' | 'node';

export interface AuditLogTable {
  id: string;
  at: Date;
  actor_type: ActorType;
  actor_id: string | null;
  action: string;
  entity_type: string | null;
  entity_id: string | null;
  ip: string | null;
  details: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  /** The API token the actor acted through (api_tokens.id), when it was one. */
  via_token_id: ColumnType<string | null, string | null | undefined, string | null>;
}
export type AuditLogRow = Selectable<AuditLogTable>;

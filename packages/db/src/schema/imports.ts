import type { ColumnType } from 'kysely';

type Int8 = ColumnType<number, number | undefined, number>;
type Json<T> = ColumnType<T, string, string>;

export type ImportSourceKindColumn = 'marzban' | 'marzneshin' | '3x-ui' | 'remnawave';

/** A panel moved in from (issue 34, docs/import.md): one row per name the operator gave it. */
export interface ImportSourcesTable {
  id: string;
  kind: ImportSourceKindColumn;
  name: string;
  /** Sealed: the secret that signed the source's subscription links (Marzban's jwt.secret_key). */
  link_secret_enc: string | null;
  source_version: string | null;
  first_imported_at: Date;
  last_imported_at: Date;
  legacy_hits: Int8;
  last_legacy_hit_at: Date | null;
}

/** Which subscription a source user became: what a re-import updates and an old link finds. */
export interface ImportedUsersTable {
  source_id: string;
  source_key: string;
  username: string;
  /** The key the source's links name the user by (3x-ui's subId), when they name it directly; unique per source. */
  link_key: ColumnType<string | null, string | null | undefined, string | null>;
  subscription_id: string;
  source_created_at: Date;
  links_revoked_at: Date | null;
  links_retired_at: Date | null;
  imported_at: Date;
}

/** The access group that stands for one of the source's inbounds. */
export interface ImportedInboundsTable {
  source_id: string;
  tag: string;
  access_group_id: string;
  /** The inbound profile the import made of it (null: not made, or deleted since). */
  profile_id: string | null;
}

/** An import started by an upload, run by the worker (imports/import-jobs.ts). */
export interface ImportJobsTable {
  id: string;
  kind: 'marzban' | 'marzneshin' | '3x-ui' | 'remnawave';
  status: 'queued' | 'running' | 'done' | 'failed';
  options: Json<Record<string, unknown>>;
  source_file: Uint8Array | null;
  xray_config: string | null;
  file_bytes: Int8;
  progress: Json<{ phase: string; done: number; total: number }>;
  report: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  error: string | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

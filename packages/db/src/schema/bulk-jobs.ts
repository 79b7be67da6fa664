import type { ColumnType, Generated } from 'kysely';

type Json<T> = ColumnType<T, string, string>;

export type BulkJobStatus = 'queued' | 'running' | 'done' | 'failed';
export type BulkTarget = 'subscriptions' | 'clients';

/** A bulk action (issue 35.3, docs/integrations.md "Bulk actions"): one row per job. */
export interface BulkJobsTable {
  id: string;
  target: BulkTarget;
  action: Json<Record<string, unknown>>;
  selection: Json<Record<string, unknown>>;
  status: BulkJobStatus;
  total: number;
  done: Generated<number>;
  skipped: Generated<number>;
  error: string | null;
  created_by: string | null;
  created_by_token: string | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

/** The ids a job was given, each marked done in the transaction that changed it. */
export interface BulkJobItemsTable {
  job_id: string;
  subject_id: string;
  done_at: Date | null;
  skipped: Generated<boolean>;
}

/** Nodes a job's changes reach: one revision each when the job ends. */
export interface BulkJobNodesTable {
  job_id: string;
  node_id: string;
}

import type { BulkJobStatus, BulkTarget } from '@svc/db';

export interface BulkJobView {
  id: string;
  target: BulkTarget;
  action: Record<string, unknown>;
  status: BulkJobStatus;
  /** Items the job took when it was made. */
  total: number;
  /** Items done so far (applied or skipped). */
  done: number;
  /** Of `done`, the ones the action could not apply (deleted meanwhile; a client move its state refuses; a client with subscriptions or payments to delete). */
  skipped: number;
  error: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export const BULK_JOB_COLUMNS = [
  'id',
  'target',
  'action',
  'status',
  'total',
  'done',
  'skipped',
  'error',
  'created_by',
  'created_at',
  'updated_at',
  'finished_at',
] as const;

export function bulkJobView(r: {
  id: string;
  target: BulkTarget;
  action: unknown;
  status: BulkJobStatus;
  total: number;
  done: number;
  skipped: number;
  error: string | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}): BulkJobView {
  return {
    id: r.id,
    target: r.target,
    action: (typeof r.action === 'string' ? JSON.parse(r.action) : r.action) as Record<string, unknown>,
    status: r.status,
    total: r.total,
    done: r.done,
    skipped: r.skipped,
    error: r.error,
    created_by: r.created_by,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
    finished_at: r.finished_at?.toISOString() ?? null,
  };
}

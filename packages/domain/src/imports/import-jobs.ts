import { z } from 'zod';
import { isDomainError, NotFoundError, ValidationError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { RefId } from '../shared/fields.ts';
import { newId } from '../shared/ids.ts';
import { JOBS } from '../shared/jobs.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { applyImport, SOURCE_NAME } from './apply-import.ts';
import type { ImportBatch, ImportSourceKind } from './import-batch.ts';
import type { ImportReport } from './import-report.ts';

/** An uploaded source file larger than this is refused before it is read (http.import_body_limit_bytes bounds the request). */
export const IMPORT_UPLOAD_MAX_BYTES = 512 * 1024 * 1024;
/** The sources whose store is a file an admin can upload (Remnawave's is a PostgreSQL database: `svc import` reads it by URL). */
export const UPLOADABLE_SOURCES = ['marzban', 'marzneshin', '3x-ui'] as const;
const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
/** A job whose enqueue was lost is handed to the queue again after this long queued. */
const REQUEUE_AFTER_MS = 60_000;
/** A running import silent this long (no progress written) died with its worker: it runs again. */
const RUNNING_SILENT_MS = 10 * 60_000;

/** POST /imports: what the admin chose beside the file. */
export const QueueImportInput = z
  .object({
    from: z.enum(UPLOADABLE_SOURCES),
    source_name: z
      .string()
      .regex(SOURCE_NAME, 'lower-case letters, digits, . _ -, at most 63 characters')
      .optional()
      .meta({ description: "the source's name here (default: its kind); importing again under it updates" }),
    nodes: z
      .array(RefId)
      .max(100)
      .default([])
      .meta({ description: "nodes (ids or names) the source's inbounds are bound on, at their ports" }),
    tls_certificate_id: RefId.nullable().default(null).meta({ description: "the certificate the source's TLS inbounds serve with here" }),
    dry_run: z.boolean().default(false).meta({ description: 'decide and report everything, write nothing' }),
    auth_algorithm: z.enum(['xxh128', 'plain']).default('xxh128').meta({ description: "Marzneshin's AUTH_GENERATION_ALGORITHM" }),
  })
  .strict();
export type QueueImportInput = z.output<typeof QueueImportInput>;

export interface ImportJobProgress {
  phase: 'queued' | 'reading' | 'importing' | 'done';
  done: number;
  total: number;
}

export interface ImportJobView {
  id: string;
  from: ImportSourceKind;
  status: 'queued' | 'running' | 'done' | 'failed';
  options: Omit<QueueImportInput, 'from'>;
  file_bytes: number;
  progress: ImportJobProgress;
  report: ImportReport | null;
  error: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

/** What the worker's reader gets: the source as uploaded. */
export interface ImportJobSource {
  kind: ImportSourceKind;
  file: Uint8Array;
  xrayConfig: string | null;
  authAlgorithm: 'xxh128' | 'plain';
}

/** The reader of an uploaded source: @svc/importers, outside the domain (a vendor format). */
export type ReadImportSource = (source: ImportJobSource) => Promise<ImportBatch>;

const viewOf = (r: {
  id: string;
  kind: ImportSourceKind;
  status: ImportJobView['status'];
  options: unknown;
  file_bytes: number | string;
  progress: unknown;
  report: unknown;
  error: string | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}): ImportJobView => ({
  id: r.id,
  from: r.kind,
  status: r.status,
  options: r.options as ImportJobView['options'],
  file_bytes: Number(r.file_bytes),
  progress: r.progress as ImportJobProgress,
  report: (r.report as ImportReport | null) ?? null,
  error: r.error,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
  finished_at: r.finished_at?.toISOString() ?? null,
});

const VIEW_COLUMNS = [
  'id',
  'kind',
  'status',
  'options',
  'file_bytes',
  'progress',
  'report',
  'error',
  'created_at',
  'updated_at',
  'finished_at',
] as const;

/**
 * POST /imports (docs/import.md): an uploaded source store, held until the worker's job
 * `imports.run` has imported it. A file that is not SQLite at all is refused here; everything
 * else about it (its tables, its records) is the job's to find out and report.
 */
export async function queueImport(
  ctx: DomainContext,
  input: QueueImportInput,
  file: Uint8Array,
  xrayConfig: string | null,
): Promise<ImportJobView> {
  if (file.byteLength > IMPORT_UPLOAD_MAX_BYTES)
    throw new ValidationError('invalid import', { file: `larger than ${IMPORT_UPLOAD_MAX_BYTES} bytes` });
  if (file.byteLength < 100 || !Buffer.from(file.subarray(0, 16)).equals(SQLITE_MAGIC))
    throw new ValidationError('invalid import', { file: 'not an SQLite database (it does not start with the SQLite header)' });
  if (xrayConfig !== null && input.from !== 'marzban')
    throw new ValidationError('invalid import', { xray_config: "only Marzban's inbounds live in an xray_config.json" });
  const { from, ...options } = input;
  return unitOfWork(ctx, async (uow) => {
    const now = ctx.clock.now();
    const row = await uow.db
      .insertInto('import_jobs')
      .values({
        id: newId('imj', now.getTime()),
        kind: from,
        status: 'queued',
        options: JSON.stringify(options),
        source_file: file,
        xray_config: xrayConfig,
        file_bytes: file.byteLength,
        progress: JSON.stringify({ phase: 'queued', done: 0, total: 0 }),
        report: null,
        error: null,
        created_by: uow.actor.id,
        created_at: now,
        updated_at: now,
        finished_at: null,
      })
      .returning(VIEW_COLUMNS)
      .executeTakeFirstOrThrow();
    uow.enqueue(JOBS.importsRun, { id: row.id }, { id: `import-${row.id}` });
    uow.audit({
      action: 'import.queued',
      entity_type: 'import_job',
      entity_id: row.id,
      details: { kind: from, file_bytes: file.byteLength, dry_run: options.dry_run },
    });
    return viewOf(row);
  });
}

export async function getImportJob(ctx: Pick<DomainContext, 'db'>, id: string): Promise<ImportJobView> {
  const row = await ctx.db.selectFrom('import_jobs').select(VIEW_COLUMNS).where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('no such import');
  return viewOf(row);
}

/** The latest imports first (a handful: an installation moves in once or twice). */
export async function listImportJobs(ctx: Pick<DomainContext, 'db'>, limit = 50): Promise<ImportJobView[]> {
  const rows = await ctx.db.selectFrom('import_jobs').select(VIEW_COLUMNS).orderBy('created_at', 'desc').limit(limit).execute();
  return rows.map(viewOf);
}

/** Progress is written at most this often (each write is one statement beside the import's own transaction). */
const PROGRESS_EVERY_MS = 1000;

/**
 * `imports.run`: reads the uploaded source (through `read`) and imports it (applyImport, one
 * transaction), writing the progress as it goes and the report at the end; the file is dropped
 * then. Idempotent: a job that ended is not run again, and one that crashed midway runs again
 * from the file (the import is one transaction: nothing of the crashed run is left, and a
 * re-import updates). What is wrong with the source or the options (a foreign file, an unknown
 * node) ends the job as failed with the reason; anything else (the database away) fails this
 * attempt, and the queue retries it.
 */
export async function runImportJob(ctx: DomainContext, id: string, read: ReadImportSource): Promise<void> {
  const job = await ctx.db.selectFrom('import_jobs').selectAll().where('id', '=', id).executeTakeFirst();
  if (!job || job.status === 'done' || job.status === 'failed' || !job.source_file) return;
  const options = job.options as unknown as Omit<QueueImportInput, 'from'>;
  let last = 0;
  const progress = async (p: ImportJobProgress, status: 'running' = 'running') => {
    last = Date.now();
    await ctx.db
      .updateTable('import_jobs')
      .set({ status, progress: JSON.stringify(p), updated_at: ctx.clock.now() })
      .where('id', '=', id)
      .execute();
  };
  await progress({ phase: 'reading', done: 0, total: 0 });
  let pending: Promise<void> = Promise.resolve();
  try {
    const batch = await read({ kind: job.kind, file: job.source_file, xrayConfig: job.xray_config, authAlgorithm: options.auth_algorithm });
    await progress({ phase: 'importing', done: 0, total: batch.users.length });
    const report = await applyImport(ctx, batch, {
      ...(options.source_name ? { sourceName: options.source_name } : {}),
      nodes: options.nodes,
      tlsCertificateId: options.tls_certificate_id,
      dryRun: options.dry_run,
      onProgress: (done, total) => {
        if (Date.now() - last >= PROGRESS_EVERY_MS) pending = pending.then(() => progress({ phase: 'importing', done, total }));
      },
    });
    await pending;
    await finish(ctx, id, { status: 'done', report, error: null, total: batch.users.length });
  } catch (err) {
    await pending.catch(() => {});
    if (!isDomainError(err) && !(err instanceof Error && err.name === 'ImportSourceError')) throw err;
    const fields =
      isDomainError(err) && err.errors
        ? ` (${Object.entries(err.errors)
            .map(([k, v]) => `${k}: ${v}`)
            .join('; ')})`
        : '';
    await finish(ctx, id, { status: 'failed', report: null, error: `${err.message}${fields}`, total: 0 });
  }
}

async function finish(
  ctx: DomainContext,
  id: string,
  end: { status: 'done' | 'failed'; report: ImportReport | null; error: string | null; total: number },
): Promise<void> {
  await unitOfWork(ctx, async (uow) => {
    const now = ctx.clock.now();
    await uow.db
      .updateTable('import_jobs')
      .set({
        status: end.status,
        report: end.report === null ? null : JSON.stringify(end.report),
        error: end.error,
        progress: JSON.stringify({ phase: 'done', done: end.total, total: end.total }),
        source_file: null,
        xray_config: null,
        updated_at: now,
        finished_at: now,
      })
      .where('id', '=', id)
      .execute();
    uow.audit({ action: `import.${end.status}`, entity_type: 'import_job', entity_id: id, details: { error: end.error } });
  });
}

/** `imports.sweep`: a queued import whose job was lost (a queue restart) is handed to the queue again. */
export async function requeueStaleImports(ctx: DomainContext): Promise<number> {
  const now = ctx.clock.now().getTime();
  // A running import writes its progress every second: one silent this long died with its worker.
  const rows = await ctx.db
    .selectFrom('import_jobs')
    .select('id')
    .where((eb) =>
      eb.or([
        eb.and([eb('status', '=', 'queued'), eb('updated_at', '<', new Date(now - REQUEUE_AFTER_MS))]),
        eb.and([eb('status', '=', 'running'), eb('updated_at', '<', new Date(now - RUNNING_SILENT_MS))]),
      ]),
    )
    .execute();
  for (const r of rows) await ctx.jobs.enqueue(JOBS.importsRun, { id: r.id }, { id: `import-${r.id}-${ctx.clock.now().getTime()}` });
  return rows.length;
}

import { createHash } from 'node:crypto';
import { type Kysely, type Migration, sql } from 'kysely';
import { migrateToLatest } from '../migrate.ts';
import { migrations } from '../migrations/index.ts';
import { allFunctionSignatures, allTableNames, MIGRATION_LOCK_TABLE, readForeignKeys, readTables } from './catalog.ts';
import { BackupError } from './errors.ts';
import { KEY_PART, MANIFEST, MANIFEST_SUM } from './manifest.ts';
import { archiveEntries, lines, type VerifiedArchive } from './read-archive.ts';
import { ArchiveFormatError } from './tar.ts';

export class TargetNotEmptyError extends BackupError {}

export interface RestoreResult {
  tables: number;
  rows: number;
  /** Migrations run after the restore, bringing an older archive's schema to this build's. */
  migrated: string[];
}

const BATCH = 500;

/** Whether the current schema holds anything: any table at all (a restore replaces, never merges). */
export async function targetTables(db: Kysely<any>): Promise<string[]> {
  return allTableNames(db);
}

/**
 * Restores a verified archive (verifyArchive) into the current schema, in one transaction:
 * on a non-empty schema only with `force` (then every table and function in it is dropped first), the
 * schema rebuilt by this build's migrations up to the archive's version, the tables and
 * columns compared with the archive's, the rows inserted in the archive's order (a table after
 * those it references) through jsonb_populate_recordset, the parts' checksums checked again as
 * they are read (the file may have changed since it was verified), row counts compared. Any
 * failure rolls all of it back: the target is as it was. Then the remaining migrations run
 * forward, as at any start.
 */
export async function restoreBackup(db: Kysely<any>, archive: VerifiedArchive, opts: { force: boolean }): Promise<RestoreResult> {
  const { manifest } = archive;
  const before = await targetTables(db);
  if (before.length && !opts.force)
    throw new TargetNotEmptyError(
      `the target database is not empty (${before.length} tables); restore replaces everything in it: confirm with --force, or restore into an empty database`,
    );
  let rows = 0;
  await db.transaction().execute(async (trx) => {
    if (opts.force) {
      for (const t of await allTableNames(trx)) await sql`drop table if exists ${sql.table(t)} cascade`.execute(trx);
      // The migrations make them again (a statement trigger's function); signatures from the catalog.
      for (const f of await allFunctionSignatures(trx)) await sql`drop function if exists ${sql.raw(f)} cascade`.execute(trx);
    }
    for (const name of manifest.schema.migrations) await (migrations[name] as Migration).up(trx);
    // kysely's bookkeeping, as its migrator creates it; the migration rows come from the archive.
    await trx.schema
      .createTable('kysely_migration')
      .addColumn('name', 'varchar(255)', (c) => c.notNull().primaryKey())
      .addColumn('timestamp', 'varchar(255)', (c) => c.notNull())
      .execute();
    await trx.schema
      .createTable(MIGRATION_LOCK_TABLE)
      .addColumn('id', 'varchar(255)', (c) => c.notNull().primaryKey())
      .addColumn('is_locked', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await trx.insertInto(MIGRATION_LOCK_TABLE).values({ id: 'migration_lock', is_locked: 0 }).execute();

    const target = await readTables(trx);
    const archived = new Map(manifest.tables.map((t) => [t.name, t]));
    const missing = [...target.keys()].filter((t) => !archived.has(t));
    const foreign = [...archived.keys()].filter((t) => !target.has(t));
    if (missing.length || foreign.length)
      throw new ArchiveFormatError(
        `the archive's tables differ from the schema ${manifest.schema.version} this build creates (missing: ${missing.join(', ') || 'none'}; unknown: ${foreign.join(', ') || 'none'}); nothing was changed`,
      );
    for (const [name, t] of target) {
      const cols = archived.get(name)?.columns ?? [];
      if (cols.length !== t.columns.length || !cols.every((c) => t.columns.includes(c)))
        throw new ArchiveFormatError(
          `the archive's columns of ${name} differ from the schema ${manifest.schema.version} this build creates; nothing was changed`,
        );
    }
    // The archive's rows are the whole truth: anything a migration seeded goes first.
    await sql`truncate table ${sql.join([...target.keys()].map((t) => sql.table(t)))}`.execute(trx);
    const selfReferencing = new Set((await readForeignKeys(trx)).filter((f) => f.child === f.parent).map((f) => f.child));
    // The archive holds every row as it was, derived ones too: the schema's own triggers (a
    // subscription's counters row added on its insert, 2026-12-02T1400) stay off while they go
    // in, and on again in this transaction. Foreign keys are not user triggers: still checked.
    const setTriggers = async (on: boolean) => {
      for (const t of target.keys()) await sql`alter table ${sql.table(t)} ${sql.raw(on ? 'enable' : 'disable')} trigger user`.execute(trx);
    };
    await setTriggers(false);

    const entries = archiveEntries(archive.file);
    try {
      for await (const entry of entries) {
        if (entry.name === MANIFEST || entry.name === MANIFEST_SUM || entry.name === KEY_PART) {
          for await (const _ of entry.body);
          continue;
        }
        const part = manifest.parts.find((p) => p.name === entry.name);
        const table = manifest.tables.find((t) => t.part === entry.name);
        const columns = target.get(table?.name ?? '');
        if (!part || !table || !columns) throw new ArchiveFormatError(`the archive changed since it was checked (${entry.name})`);
        const insertable = columns.columns.filter((c) => !columns.generated.has(c));
        // A table referencing itself goes in one statement: its keys are checked at the statement's end.
        const batch = selfReferencing.has(table.name) ? Number.POSITIVE_INFINITY : BATCH;
        const hash = createHash('sha256');
        let pending: string[] = [];
        let count = 0;
        const flush = async () => {
          if (!pending.length) return;
          const cols = sql.join(insertable.map((c) => sql.ref(c)));
          await sql`insert into ${sql.table(table.name)} (${cols})
            select ${cols} from jsonb_populate_recordset(null::${sql.table(table.name)}, ${`[${pending.join(',')}]`}::jsonb)`.execute(trx);
          count += pending.length;
          pending = [];
        };
        for await (const line of lines(entry, hash)) {
          pending.push(line);
          if (pending.length >= batch) await flush();
        }
        await flush();
        if (hash.digest('hex') !== part.sha256 || count !== table.rows)
          throw new ArchiveFormatError(`the archive changed since it was checked (${entry.name}); nothing was changed`);
        rows += count;
      }
    } finally {
      await entries.return(undefined);
    }
    await setTriggers(true);
  });
  const migrated = await migrateToLatest(db);
  return { tables: manifest.tables.length, rows, migrated };
}

import { type DatabaseIntrospector, type Kysely, type Migration, type MigrationResultSet, Migrator, sql, type TableMetadata } from 'kysely';
import { migrations } from './migrations/index.ts';

export class MigrationError extends Error {}

/**
 * The database was migrated by a newer build: it holds migrations this build does not know.
 * Nothing is run against it (migrations are forward-only; there is no way back but a backup).
 */
export class NewerSchemaError extends MigrationError {
  constructor(readonly unknown: string[]) {
    super(
      `the database schema is newer than this build: it has migration${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} ` +
        `that this build does not know (a newer svc migrated it). Run that version or a newer one, or restore a backup taken ` +
        'before the upgrade: migrations only go forward',
    );
  }
}

/** Kysely's bookkeeping table, in the schema being migrated. */
const MIGRATION_TABLE = 'kysely_migration';

/** Every migration this build knows, in the order they run (names sort in that order). */
export function knownMigrations(): string[] {
  return Object.keys(migrations).sort();
}

/** The newest migration this build knows: the schema version it writes and reads. */
export function latestMigration(): string {
  const all = knownMigrations();
  const last = all.at(-1);
  if (!last) throw new MigrationError('no migrations are registered');
  return last;
}

export interface SchemaState {
  /** Migrations recorded in the database, in order (those this build knows and those it does not). */
  applied: string[];
  /** Migrations this build knows that the database has not had yet, in the order they would run. */
  pending: string[];
  /** Recorded migrations this build does not know: a newer build migrated the database. */
  unknown: string[];
}

/**
 * Reads which migrations the database in the current schema has had, without creating or
 * locking anything (an empty database has had none). `svc migrate --dry-run`, backups and
 * restore use it; a migration running meanwhile in another process may not be seen yet.
 */
export async function readSchemaState(db: Kysely<any>): Promise<SchemaState> {
  const { rows } = await sql<{ schema: string | null; present: boolean }>`
    select current_schema() as schema, exists (select 1 from information_schema.tables
      where table_schema = current_schema() and table_name = ${MIGRATION_TABLE}) as present`.execute(db);
  const schema = rows[0]?.schema;
  const applied =
    schema && rows[0]?.present
      ? (await sql<{ name: string }>`select name from ${sql.table(`${schema}.${MIGRATION_TABLE}`)}`.execute(db)).rows
          .map((r) => r.name)
          .sort()
      : [];
  const done = new Set(applied);
  const known = new Set(knownMigrations());
  return {
    applied,
    pending: knownMigrations().filter((m) => !done.has(m)),
    unknown: applied.filter((m) => !known.has(m)),
  };
}

/** The migrations recorded in the database, in order (see readSchemaState). */
export async function appliedMigrations(db: Kysely<any>): Promise<string[]> {
  return (await readSchemaState(db)).applied;
}

/**
 * Kysely's migrator asks the introspector whether its bookkeeping tables exist. The stock
 * PostgreSQL introspector reads every column of every table in every schema (with
 * pg_get_serial_sequence), so a schema dropped meanwhile by another session makes it fail
 * with "schema … does not exist". Ours looks only at the schema we migrate.
 */
function scopedIntrospector(db: Kysely<any>, schema: string): DatabaseIntrospector {
  const getTables = async (): Promise<TableMetadata[]> => {
    const { rows } = await sql<{
      name: string;
    }>`select table_name as name from information_schema.tables where table_schema = ${schema}`.execute(db);
    return rows.map((r) => ({ name: r.name, schema, isView: false, columns: [] }));
  };
  return {
    getSchemas: async () => [{ name: schema }],
    getTables,
    getMetadata: async () => ({ tables: await getTables() }),
  };
}

/**
 * Brings the schema to the latest version; safe to run concurrently (kysely takes a lock).
 * Refuses a database migrated by a newer build (NewerSchemaError) before running anything.
 */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  return runMigrations(db, migrations);
}

/**
 * Brings the schema up to `name` and no further, as the build whose newest migration that was
 * would have: the upgrade tests seed a database at each earlier schema. Forward only: a
 * database already past `name` is refused, as a newer schema.
 */
export async function migrateThrough(db: Kysely<any>, name: string): Promise<string[]> {
  const all = knownMigrations();
  const at = all.indexOf(name);
  if (at < 0) throw new MigrationError(`no migration is named ${name}`);
  const prefix = Object.fromEntries(all.slice(0, at + 1).map((m) => [m, migrations[m] as Migration]));
  return runMigrations(db, prefix);
}

async function runMigrations(db: Kysely<any>, known: Record<string, Migration>): Promise<string[]> {
  // Name the schema explicitly: kysely's bookkeeping tables go to the schema we migrate.
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  if (!schema) throw new MigrationError('the search_path names no existing schema to migrate');
  const { applied } = await readSchemaState(db);
  const unknown = applied.filter((m) => !(m in known));
  if (unknown.length) throw new NewerSchemaError(unknown);
  const introspector = scopedIntrospector(db, schema);
  const scoped = new Proxy(db, {
    get(target, prop) {
      if (prop === 'introspection') return introspector;
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const migrator = new Migrator({ db: scoped, migrationTableSchema: schema, provider: { getMigrations: async () => known } });
  const { error, results }: MigrationResultSet = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const message = error instanceof Error ? error.message : String(error);
    // Another process may have recorded a newer build's migration between our read and the lock.
    const missing = /previously executed migration (\S+) is missing/.exec(message)?.[1];
    if (missing) throw new NewerSchemaError([missing]);
    throw new MigrationError(`migration ${failed?.migrationName ?? ''} failed: ${message}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

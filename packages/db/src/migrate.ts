import { type DatabaseIntrospector, type Kysely, type MigrationResultSet, Migrator, sql, type TableMetadata } from 'kysely';
import { migrations } from './migrations/index.ts';

export class MigrationError extends Error {}

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

/** Brings the schema to the latest version; safe to run concurrently (kysely takes a lock). */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  // Name the schema explicitly: kysely's bookkeeping tables go to the schema we migrate.
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  if (!schema) throw new MigrationError('the search_path names no existing schema to migrate');
  const introspector = scopedIntrospector(db, schema);
  const scoped = new Proxy(db, {
    get(target, prop) {
      if (prop === 'introspection') return introspector;
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const migrator = new Migrator({ db: scoped, migrationTableSchema: schema, provider: { getMigrations: async () => migrations } });
  const { error, results }: MigrationResultSet = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new MigrationError(`migration ${failed?.migrationName ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

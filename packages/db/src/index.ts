export * from './backup/index.ts';
export { type ConnectOptions, connectDatabase, type DatabaseHandle, type Db, fromPGlite } from './connect.ts';
export { DataDirLockedError } from './data-dir-lock.ts';
export {
  appliedMigrations,
  knownMigrations,
  latestMigration,
  MigrationError,
  migrateThrough,
  migrateToLatest,
  NewerSchemaError,
  readSchemaState,
  type SchemaState,
} from './migrate.ts';
export { migrations } from './migrations/index.ts';
export { PGliteDialect } from './pglite-dialect.ts';
export { PGLITE_EXTENSIONS } from './pglite-extensions.ts';
export type * from './schema/index.ts';
export { isDatabaseUnavailable } from './unavailable.ts';

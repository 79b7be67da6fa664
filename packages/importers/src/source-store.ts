import pg from 'pg';
import { ImportSourceError } from './import-source-error.ts';
import { openSqliteFile } from './sqlite-file.ts';

/** A value a source row holds: what SQLite (through sql.js) and PostgreSQL (timestamps as text) give. */
export type SourceValue = string | number | boolean | bigint | Uint8Array | Date | null | Record<string, unknown> | unknown[];
export type SourceRow = Record<string, SourceValue>;

/**
 * Another panel's store, read only, whichever database it lives in: an SQLite file (read into
 * memory through sql.js) or a PostgreSQL database (one READ ONLY transaction). The readers
 * write their queries in the SQL both accept and ask `dialect` where they differ.
 */
export interface SourceStore {
  readonly dialect: 'sqlite' | 'postgres';
  /** The names of the store's tables. */
  readonly tables: ReadonlySet<string>;
  /** The columns of `table` (empty when there is no such table). */
  columns(table: string): ReadonlySet<string>;
  rows(sql: string): Promise<SourceRow[]>;
  close(): Promise<void>;
}

export async function sqliteStore(bytes: Uint8Array, what: string): Promise<SourceStore> {
  const db = await openSqliteFile(bytes, what);
  const columns = new Map<string, Set<string>>();
  return {
    dialect: 'sqlite',
    tables: db.tables,
    columns: (table) => {
      if (!db.tables.has(table)) return new Set();
      const known = columns.get(table);
      if (known) return known;
      const set = db.columns(table);
      columns.set(table, set);
      return set;
    },
    rows: async (sql) => db.rows(sql),
    close: async () => db.close(),
  };
}

/** What runs a query against a PostgreSQL database (a pg client, or PGlite in tests); timestamps without a zone come as text. */
export type PostgresQuery = (sql: string) => Promise<{ rows: SourceRow[] }>;

/**
 * A PostgreSQL store through `query`: the schema's tables and columns (of the current schema)
 * read once; every query a reader runs goes through the same connection, in the caller's
 * read-only transaction.
 */
export async function postgresStoreOf(query: PostgresQuery, what: string, close: () => Promise<void>): Promise<SourceStore> {
  const guarded = async (sql: string) => {
    try {
      return (await query(sql)).rows;
    } catch (err) {
      throw new ImportSourceError(`${what} could not be read: ${(err as Error).message}`);
    }
  };
  const listed = await guarded(
    `select table_name, column_name from information_schema.columns where table_schema = current_schema() order by table_name, ordinal_position`,
  );
  const columns = new Map<string, Set<string>>();
  for (const r of listed) {
    const table = String(r.table_name);
    const set = columns.get(table) ?? new Set<string>();
    set.add(String(r.column_name));
    columns.set(table, set);
  }
  return {
    dialect: 'postgres',
    tables: new Set(columns.keys()),
    columns: (table) => columns.get(table) ?? new Set(),
    rows: guarded,
    close,
  };
}

/** Type oids whose text form the readers parse themselves: timestamp without time zone (a naive UTC time), json, jsonb. */
const TIMESTAMP = 1114;

/**
 * A PostgreSQL store at `url`: one connection in a READ ONLY transaction (nothing the import
 * runs can write to the source), each statement bounded in time.
 */
export async function postgresStore(url: string, what: string): Promise<SourceStore> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ImportSourceError(`${what}: not a database URL`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')
    throw new ImportSourceError(`${what}: only PostgreSQL URLs (postgres://…) are read; for SQLite give the file`);
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 10_000,
    statement_timeout: 120_000,
    application_name: 'svc-import',
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        oid === TIMESTAMP ? (v: string) => v : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // A connection the server ends (a restart, a DBA) fails the next query, which says so; never the process.
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('begin transaction isolation level repeatable read read only');
  } catch (err) {
    await client.end().catch(() => {});
    throw new ImportSourceError(`${what} cannot be opened: ${(err as Error).message}`);
  }
  return postgresStoreOf(
    (sql) => client.query(sql) as Promise<{ rows: SourceRow[] }>,
    what,
    async () => {
      await client.query('rollback').catch(() => {});
      await client.end().catch(() => {});
    },
  );
}

/** A flag column: SQLite's 0/1, PostgreSQL's booleans. */
export const flag = (v: SourceValue | undefined): boolean => v === true || v === 1 || v === '1' || v === 't' || v === 'true';

/** A column that holds JSON: SQLite's text, PostgreSQL's json(b) already parsed. */
export function jsonOf(v: SourceValue | undefined): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') {
    try {
      return JSON.parse(v);
    } catch {
      return null;
    }
  }
  return v;
}

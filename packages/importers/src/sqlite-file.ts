import initSqlJs, { type Database, type SqlValue } from 'sql.js';
import { ImportSourceError } from './import-source-error.ts';

/**
 * Another panel's SQLite file, opened read-only in memory through sql.js (SQLite compiled to
 * WebAssembly: a hostile file runs no native code, and nothing is ever written back). The
 * caller bounds the file's size before reading it into memory.
 */
export interface SqliteFile {
  /** The names of the file's tables. */
  readonly tables: ReadonlySet<string>;
  /** The columns of `table`. */
  columns(table: string): Set<string>;
  /** The rows of a query, as objects by column name. */
  rows(sql: string, params?: SqlValue[]): Array<Record<string, SqlValue>>;
  close(): void;
}

const MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

let engine: ReturnType<typeof initSqlJs> | undefined;

export async function openSqliteFile(bytes: Uint8Array, what: string): Promise<SqliteFile> {
  if (bytes.length < 100 || !Buffer.from(bytes.subarray(0, 16)).equals(MAGIC))
    throw new ImportSourceError(`${what} is not an SQLite database (it does not start with the SQLite header)`);
  engine ??= initSqlJs();
  const SQL = await engine;
  let db: Database;
  let tables: Set<string>;
  try {
    db = new SQL.Database(bytes);
    tables = new Set(rowsOf(db, "select name from sqlite_master where type = 'table'").map((r) => String(r.name)));
  } catch (err) {
    throw new ImportSourceError(`${what} is a damaged SQLite database: ${(err as Error).message}`);
  }
  return {
    tables,
    columns: (table) => new Set(rowsOf(db, `select name from pragma_table_info(?)`, [table]).map((r) => String(r.name))),
    rows: (sql, params) => {
      try {
        return rowsOf(db, sql, params);
      } catch (err) {
        throw new ImportSourceError(`${what} could not be read: ${(err as Error).message}`);
      }
    },
    close: () => db.close(),
  };
}

function rowsOf(db: Database, sql: string, params: SqlValue[] = []): Array<Record<string, SqlValue>> {
  const statement = db.prepare(sql, params);
  const out: Array<Record<string, SqlValue>> = [];
  try {
    while (statement.step()) out.push(statement.getAsObject() as Record<string, SqlValue>);
  } finally {
    statement.free();
  }
  return out;
}

/** A naive UTC timestamp as SQLAlchemy writes it into SQLite ("2025-01-02 03:04:05.123456"), or null. */
export function utcTimestamp(value: unknown): Date | null {
  if (value === null || value === undefined || value === '') return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value;
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?$/.exec(String(value));
  if (!m) return null;
  const at = new Date(`${m[1]}T${m[2]}.${(m[3] ?? '0').padEnd(3, '0').slice(0, 3)}Z`);
  return Number.isNaN(at.getTime()) ? null : at;
}

/** A whole number of a column (an int8 may come as a number), or null. */
export function wholeNumber(value: unknown): number | null {
  if (value === null || value === undefined || value === '') return null;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : null;
}

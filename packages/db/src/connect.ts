import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { lockDataDir } from './data-dir-lock.ts';
import { PGliteDialect, type PGliteSession } from './pglite-dialect.ts';
import { startPGliteWorker } from './pglite-worker.ts';
import type { Database } from './schema/index.ts';

// int8 (counters, revisions, count(*)) as number, as PGlite returns it: every int8 we store
// (bytes, revisions) stays below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export type Db = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** Where PGlite keeps its files, or the server URL with the password masked. */
  location: string;
  destroy(): Promise<void>;
}

export interface ConnectOptions {
  /** PostgreSQL server URL; when absent, PGlite in `dataDir`. */
  url?: string | undefined;
  dataDir: string;
  poolSize?: number;
  /** PostgreSQL schema to use (tests isolate by schema); created if missing. */
  schema?: string;
}

/** The dialect factory: node-postgres when a URL is given, else PGlite in the data dir. */
export async function connectDatabase(opts: ConnectOptions): Promise<DatabaseHandle> {
  if (opts.url) {
    const pool = new pg.Pool({
      connectionString: opts.url,
      max: opts.poolSize ?? 10,
      ...(opts.schema ? { options: `-c search_path=${opts.schema}` } : {}),
    });
    pool.on('connect', (client) => {
      // A connection the server ends (a restart, a failover, pg_terminate_backend) while it is
      // checked out between two statements (a transaction waiting on our code) emits 'error' on
      // its client; with no listener that is an uncaught exception that ends the process. The
      // next statement on it fails instead ("not queryable"), the unit of work rolls back, and
      // the pool drops the connection on release.
      client.on('error', () => {});
      preparesNamedStatements(client);
    });
    // The same for an idle pooled connection: the pool has already dropped it and opens a new
    // one for the next query, so there is nothing to do but keep running.
    pool.on('error', () => {});
    if (opts.schema) {
      const c = await pool.connect();
      try {
        await c.query(`CREATE SCHEMA IF NOT EXISTS "${opts.schema.replaceAll('"', '')}"`);
      } finally {
        c.release();
      }
    }
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, kind: 'postgres', location: maskUrl(opts.url), destroy: () => db.destroy() };
  }
  const dir = resolve(opts.dataDir, 'pg');
  mkdirSync(dir, { recursive: true });
  const unlock = lockDataDir(resolve(opts.dataDir, 'pg.lock'));
  try {
    const session = await startPGliteWorker(dir);
    const handle = fromPGliteSession(session, dir);
    return {
      ...handle,
      destroy: async () => {
        await handle.destroy();
        unlock();
      },
    };
  } catch (err) {
    unlock();
    throw err;
  }
}

/** Wraps an in-process PGlite instance (tests use in-memory clones of a migrated template). */
export function fromPGlite(pglite: PGlite, location = 'memory://'): DatabaseHandle {
  return fromPGliteSession(pglite as unknown as PGliteSession, location);
}

export function fromPGliteSession(session: PGliteSession, location: string): DatabaseHandle {
  const db = new Kysely<Database>({ dialect: new PGliteDialect(session) });
  return { db, kind: 'pglite', location, destroy: () => db.destroy() };
}

function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres';
  }
}

/** `/* prepared:<name> *\/` at the start of a statement's text: run it as a named prepared statement. */
const PREPARED = /^\/\* prepared:([A-Za-z0-9_.-]{1,60}) \*\//;

/**
 * Hot statements (GET /sub/{token} runs one per request) spend more time in PostgreSQL's
 * planner than executing. A statement whose text starts with `/* prepared:<name> *\/` is sent
 * as a named prepared statement on this connection: parsed and planned once per connection,
 * then only bound and executed. Opt-in by name, so SQL with varying text (IN lists of any
 * length) never piles up prepared statements. PGlite ignores the comment.
 */
function preparesNamedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (text: unknown, values?: unknown, cb?: unknown) => {
    if (typeof text === 'string') {
      const name = PREPARED.exec(text)?.[1];
      if (name) return query({ name, text, values }, cb);
    }
    return query(text, values, cb);
  };
}

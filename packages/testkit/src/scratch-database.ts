import pg from 'pg';
import { testDatabaseUrl } from './database.ts';

async function run(statement: string): Promise<void> {
  const c = new pg.Client({ connectionString: testDatabaseUrl() });
  await c.connect();
  try {
    await c.query(statement);
  } finally {
    await c.end();
  }
}

export interface ScratchDatabase {
  /** URL of the new, empty database. */
  url: string;
  /** Drops and creates it again: empty, as a wiped server would be. */
  wipe(): Promise<void>;
  drop(): Promise<void>;
}

/**
 * A whole PostgreSQL database of the test's own on the test server (DATABASE_URL), for what
 * must not run in a schema of the shared one (backups and restores of a whole installation).
 * `name` must be a plain identifier; a leftover of an earlier run is dropped first.
 */
export async function createScratchDatabase(name: string): Promise<ScratchDatabase> {
  const base = testDatabaseUrl();
  if (!base) throw new Error('createScratchDatabase needs DATABASE_URL');
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`not a plain database name: ${name}`);
  const drop = () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await drop();
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    wipe: async () => {
      await drop();
      await run(`CREATE DATABASE ${name}`);
    },
    drop,
  };
}

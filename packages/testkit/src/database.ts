import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { connectDatabase, type DatabaseHandle, fromPGlite, migrateToLatest } from '@svc/db';
import pg from 'pg';

/** PostgreSQL server for tests when DATABASE_URL is set; PGlite otherwise. */
export const testDatabaseUrl = (): string | undefined => process.env.DATABASE_URL || undefined;

let template: Promise<PGlite> | undefined;

async function migratedTemplate(): Promise<PGlite> {
  const pglite = await PGlite.create();
  const handle = fromPGlite(pglite);
  await migrateToLatest(handle.db);
  return pglite;
}

export interface TestDatabase extends DatabaseHandle {
  /** Connection URL that reaches this test's schema (PostgreSQL only), for child processes. */
  url?: string;
  schema?: string;
}

/**
 * A migrated database of the test's own: a fresh schema on the PostgreSQL server, or an
 * in-memory clone of a migrated PGlite template. Tests isolate by database, never by order.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const url = testDatabaseUrl();
  if (url) {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const handle = await connectDatabase({ url, dataDir: '', schema, poolSize: 5 });
    await migrateToLatest(handle.db);
    const u = new URL(url);
    u.searchParams.set('options', `-c search_path=${schema}`);
    return {
      ...handle,
      url: u.toString(),
      schema,
      destroy: async () => {
        await handle.destroy();
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await c.end();
      },
    };
  }
  template ??= migratedTemplate();
  const clone = await (await template).clone();
  return fromPGlite(clone as PGlite);
}

import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { connectDatabase, type DatabaseHandle, fromPGlite, migrateToLatest, migrations, PGLITE_EXTENSIONS } from '@svc/db';
import pg from 'pg';

/** PostgreSQL server for tests when DATABASE_URL is set; PGlite otherwise. */
export const testDatabaseUrl = (): string | undefined => process.env.DATABASE_URL || undefined;

let template: Promise<PGlite> | undefined;

/**
 * Where the migrated template's data directory is kept between test files (each file runs in
 * a fresh process): named by the PGlite build and the source of every migration, so a changed
 * migration or PGlite makes a new one. Loading it (~0.3 s) replaces initdb and the migrations
 * (~1.6 s) in every file after the first.
 */
function templateFile(): string {
  return join(tmpdir(), `svc-test-pglite-${templateKey()}.tar`);
}

/** The PGlite build and the source of every migration: what a migrated template depends on. */
function templateKey(): string {
  const h = createHash('sha256').update(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  for (const [name, m] of Object.entries(migrations)) h.update(name).update(String(m.up));
  return h.digest('hex').slice(0, 20);
}

/**
 * A new data directory (`SVC_DATA_DIR`) holding an embedded database that is migrated and
 * otherwise empty: what `svc start` leaves behind before it binds an installation key or creates
 * anything, copied from a template made once per migration set (in the temp folder, like the
 * template above). Suites that start the whole system many times (the agent end to end, the
 * CLI) skip the embedded database's initdb and migrations at every start (~5-10 s on 2 cores);
 * the first start of a truly fresh directory is proven where that is the subject (cli.test.ts).
 */
export async function migratedDataDir(prefix = 'svc-test-data-'): Promise<string> {
  const template = join(tmpdir(), `svc-test-embedded-${templateKey()}`);
  if (!existsSync(join(template, 'pg', 'PG_VERSION'))) {
    const making = mkdtempSync(`${template}.making-`);
    try {
      const handle = await connectDatabase({ dataDir: making });
      try {
        await migrateToLatest(handle.db);
      } finally {
        await handle.destroy();
      }
      rmSync(join(making, 'pg.lock'), { force: true });
      // Another worker may have made it meanwhile: theirs stays, ours goes.
      renameSync(making, template);
    } catch (err) {
      rmSync(making, { recursive: true, force: true });
      if (!existsSync(join(template, 'pg', 'PG_VERSION'))) throw err;
    }
  }
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cpSync(join(template, 'pg'), join(dir, 'pg'), { recursive: true });
  return dir;
}

async function migratedTemplate(): Promise<PGlite> {
  const file = templateFile();
  try {
    return await PGlite.create({ loadDataDir: new Blob([readFileSync(file)]), extensions: PGLITE_EXTENSIONS });
  } catch {
    // None yet (or unreadable): make it, and keep it for the next files.
  }
  const pglite = await PGlite.create({ extensions: PGLITE_EXTENSIONS });
  await migrateToLatest(fromPGlite(pglite).db);
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    writeFileSync(tmp, Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer()));
    renameSync(tmp, file);
  } catch {
    rmSync(tmp, { force: true });
  }
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

/**
 * An empty database of the test's own, not migrated: a fresh in-memory PGlite, or a fresh
 * schema on DATABASE_URL dropped by destroy(). The upgrade tests bring it up migration by
 * migration.
 */
export async function createEmptyTestDatabase(): Promise<TestDatabase> {
  const url = testDatabaseUrl();
  if (!url) return fromPGlite(await PGlite.create({ extensions: PGLITE_EXTENSIONS }));
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const handle = await connectDatabase({ url, dataDir: '', schema, poolSize: 3 });
  return {
    ...handle,
    schema,
    destroy: async () => {
      await handle.destroy();
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await c.end();
      }
    },
  };
}

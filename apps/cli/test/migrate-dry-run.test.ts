import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectDatabase, type DatabaseHandle, knownMigrations, migrateThrough, migrateToLatest, readSchemaState } from '@svc/db';
import { appEntry, testDatabaseUrl } from '@svc/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { parseCommand } from '../src/args.ts';

/**
 * `svc migrate --dry-run` as an operator runs it before an upgrade (docs/upgrades.md): it
 * names the migrations that would run against the configured store, in order, and changes
 * nothing; a store a newer build migrated is refused. On the embedded database, or on a fresh
 * schema of the PostgreSQL server when DATABASE_URL is set.
 */

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const TIMEOUT_MS = 120_000;

interface Exit {
  code: number;
  stdout: string;
  stderr: string;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

/** `svc <args>` in a child process with only the operator's settings. */
const svc = (args: string[], env: Record<string, string>) => node('apps/cli/src/main.ts', args, env);

/** An app's entry (its fresh bundle, or the source under tsx: appEntry) from the repository's root with only the operator's settings. */
function node(entry: string, args: string[], env: Record<string, string>): Promise<Exit> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('SVC_') && k !== 'DATABASE_URL' && k !== 'REDIS_URL' && !k.startsWith('VITEST'),
    ),
  );
  return new Promise((done) => {
    execFile(
      process.execPath,
      [...appEntry(entry).argv, ...args],
      { cwd: ROOT, env: { ...base, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

interface Store {
  env: Record<string, string>;
  /** The schema the child's tables live in. */
  schema: string;
  /** Opens the store in this process (closed before the child runs: PGlite's data dir is one process's). */
  open(): Promise<DatabaseHandle>;
}

/** The store the test's child works on: an embedded data dir, or a schema of its own on DATABASE_URL. */
function newStore(): Store {
  const dir = mkdtempSync(join(tmpdir(), 'svc-dry-run-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const server = testDatabaseUrl();
  if (!server) return { env: { SVC_DATA_DIR: dir }, schema: 'public', open: () => connectDatabase({ dataDir: dir }) };
  const schema = `dry_${randomBytes(6).toString('hex')}`;
  const url = new URL(server);
  url.searchParams.set('options', `-c search_path=${schema}`);
  cleanups.push(async () => {
    const h = await connectDatabase({ url: server, dataDir: dir, poolSize: 1 });
    await h.db.schema
      .dropSchema(schema)
      .ifExists()
      .cascade()
      .execute()
      .finally(() => h.destroy());
  });
  return {
    env: { SVC_DATA_DIR: dir, DATABASE_URL: url.toString() },
    schema,
    open: () => connectDatabase({ url: server, dataDir: dir, schema, poolSize: 1 }),
  };
}

async function withStore<T>(store: Store, use: (h: DatabaseHandle) => Promise<T>): Promise<T> {
  const h = await store.open();
  try {
    return await use(h);
  } finally {
    await h.destroy();
  }
}

/** The schema as the dry run must leave it: recorded migrations and tables with their columns. */
const schemaOf = (store: Store) => (h: DatabaseHandle) =>
  Promise.all([
    readSchemaState(h.db),
    (h.db as unknown as AnyDb)
      .selectFrom('information_schema.columns')
      .select(['table_name', 'column_name'])
      .where('table_schema', '=', store.schema)
      .orderBy('table_name')
      .orderBy('column_name')
      .execute(),
  ]).then(([state, cols]) => ({ state, cols }));

/** Kysely over tables the Database type does not name (information_schema, kysely's bookkeeping). */
type AnyDb = { selectFrom(table: string): any; insertInto(table: string): any };

const listed = (stdout: string) => stdout.split('\n').flatMap((l) => (/^ {2}(\S+)$/.exec(l)?.[1] ? [l.trim()] : []));

describe('svc migrate --dry-run', () => {
  it(
    'names the pending migrations in order and changes nothing; once they have run it says the database is up to date',
    async () => {
      const store = newStore();
      const all = knownMigrations();
      const before = await withStore(store, async (h) => {
        await migrateThrough(h.db, all[5] as string);
        return schemaOf(store)(h);
      });

      const dry = await svc(['migrate', '--dry-run'], store.env);
      expect(dry.code, dry.stderr).toBe(0);
      expect(listed(dry.stdout)).toEqual(all.slice(6));
      expect(dry.stdout).toContain('nothing was changed');
      await withStore(store, async (h) => {
        expect(await schemaOf(store)(h)).toEqual(before);
        await migrateToLatest(h.db); // what svc migrate does (cli.test.ts runs it)
      });
      const again = await svc(['migrate', '--dry-run'], store.env);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toMatch(new RegExp(`is up to date \\(${all.at(-1)}\\)`));
      expect(listed(again.stdout)).toEqual([]);
    },
    TIMEOUT_MS,
  );

  it(
    'refuses a database a newer build migrated, naming the migration it does not know, and leaves it as it was; so does an app starting on it',
    async () => {
      const store = newStore();
      const future = '2099-01-01T0000-from-a-newer-build';
      const before = await withStore(store, async (h) => {
        await migrateThrough(h.db, knownMigrations().at(-1) as string);
        await (h.db as unknown as AnyDb)
          .insertInto('kysely_migration')
          .values({ name: future, timestamp: new Date().toISOString() })
          .execute();
        return schemaOf(store)(h);
      });
      // svc migrate refuses the same way (the same error, from migrateToLatest: migrations.test.ts).
      const res = await svc(['migrate', '--dry-run'], store.env);
      expect(res.code, res.stdout).toBe(1);
      expect(res.stderr).toContain(`svc: the database schema is newer than this build: it has migration ${future}`);
      // A split deployable starting on it refuses the same way, before serving anything.
      const app = await node('apps/admin-api/src/main.ts', [], { ...store.env, SVC_INSTALLATION_KEY: randomBytes(32).toString('base64') });
      expect(app.code, app.stdout).toBe(1);
      expect(app.stderr).toContain(
        `admin-api: refusing to start, the database schema is newer than this build: it has migration ${future}`,
      );
      expect(await withStore(store, schemaOf(store))).toEqual(before);
    },
    TIMEOUT_MS,
  );

  it.skipIf(Boolean(testDatabaseUrl()))(
    'on an embedded data dir with no database yet lists every migration and creates nothing',
    async () => {
      const store = newStore();
      const res = await svc(['migrate', '--dry-run'], store.env);
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toContain('no database yet');
      expect(listed(res.stdout)).toEqual(knownMigrations());
      expect(existsSync(join(store.env.SVC_DATA_DIR as string, 'pg'))).toBe(false);
    },
    TIMEOUT_MS,
  );

  it('--dry-run belongs to svc migrate and svc import only', () => {
    expect(parseCommand(['migrate', '--dry-run'])).toMatchObject({ name: 'migrate', dryRun: true });
    expect(parseCommand(['migrate'])).toMatchObject({ name: 'migrate', dryRun: false });
    expect(() => parseCommand(['start', '--dry-run'])).toThrow('--dry-run is an option of svc migrate and svc import, not of svc start');
    expect(parseCommand(['import', '--from', 'marzban', '--source', 'db.sqlite3', '--dry-run']).import).toMatchObject({ dryRun: true });
  });
});

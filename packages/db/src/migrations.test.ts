import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { type Kysely, sql } from 'kysely';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { connectDatabase, type DatabaseHandle, fromPGlite } from './connect.ts';
import {
  knownMigrations,
  latestMigration,
  MigrationError,
  migrateThrough,
  migrateToLatest,
  NewerSchemaError,
  readSchemaState,
} from './migrate.ts';
import { migrations } from './migrations/index.ts';
import { PGLITE_EXTENSIONS } from './pglite-extensions.ts';

/**
 * Migrations only go forward (docs/upgrades.md): none has a `down`, and the way back from an
 * upgrade is the backup taken before it. A database a newer build migrated is refused before
 * anything runs, whichever store holds it.
 */

const handles: DatabaseHandle[] = [];
afterEach(async () => {
  while (handles.length) await handles.pop()?.destroy();
});

let pglite: Promise<DatabaseHandle> | undefined;
afterAll(async () => (await pglite)?.destroy());

/**
 * An empty schema of the test's own: on DATABASE_URL, dropped afterwards; else in one
 * in-memory PGlite per file (one session: the tests run one after another), made current.
 */
async function emptyDatabase(): Promise<Kysely<any>> {
  const schema = `mig_${randomBytes(6).toString('hex')}`;
  const url = process.env.DATABASE_URL;
  if (!url) {
    pglite ??= PGlite.create({ extensions: PGLITE_EXTENSIONS }).then((p) => fromPGlite(p));
    const { db } = await pglite;
    await sql`create schema ${sql.id(schema)}`.execute(db);
    await sql`set search_path to ${sql.id(schema)}`.execute(db);
    return db;
  }
  const handle = await connectDatabase({ url, dataDir: '', schema, poolSize: 2 });
  handles.push({
    ...handle,
    destroy: async () => {
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(handle.db).finally(() => handle.destroy());
    },
  });
  return handle.db;
}

const tablesOf = async (db: Kysely<any>) =>
  (
    await sql<{ name: string }>`select table_name as name from information_schema.tables
      where table_schema = current_schema() order by table_name`.execute(db)
  ).rows.map((r) => r.name);

describe('migrations are forward-only and registered once', () => {
  it('no migration defines a down: the way back from an upgrade is a backup', () => {
    const withDown = Object.entries(migrations)
      .filter(([, m]) => m.down !== undefined)
      .map(([name]) => name);
    expect(withDown).toEqual([]);
  });

  it('every migration file is registered under its file name, in the order the names sort', () => {
    const files = readdirSync(new URL('./migrations/', import.meta.url))
      .filter((f) => /^\d{4}-\d{2}-\d{2}T\d{4}-[a-z0-9-]+\.ts$/.test(f))
      .map((f) => f.replace(/\.ts$/, ''))
      .sort();
    expect(Object.keys(migrations)).toEqual(files);
    expect(knownMigrations()).toEqual(files);
    expect(latestMigration()).toBe(files.at(-1));
  });
});

describe('the schema version of a database', () => {
  it('an empty database has had none and would run every migration; reading it creates nothing', async () => {
    const db = await emptyDatabase();
    expect(await readSchemaState(db)).toEqual({ applied: [], pending: knownMigrations(), unknown: [] });
    expect(await tablesOf(db)).toEqual([]);
  });

  it('a database brought up to one migration has the earlier ones applied and the later ones pending', async () => {
    const db = await emptyDatabase();
    const all = knownMigrations();
    const middle = all[4] as string;
    expect(await migrateThrough(db, middle)).toEqual(all.slice(0, 5));
    expect(await readSchemaState(db)).toEqual({ applied: all.slice(0, 5), pending: all.slice(5), unknown: [] });
    expect(await migrateToLatest(db)).toEqual(all.slice(5));
    expect(await readSchemaState(db)).toEqual({ applied: all, pending: [], unknown: [] });
  });

  it('a database migrated by a newer build is refused before anything runs, and stays as it was', async () => {
    const db = await emptyDatabase();
    const all = knownMigrations();
    await migrateThrough(db, all[2] as string);
    const future = '2099-01-01T0000-from-a-newer-build';
    await sql`insert into kysely_migration (name, timestamp) values (${future}, ${new Date().toISOString()})`.execute(db);
    const tables = await tablesOf(db);

    const refusal = await migrateToLatest(db).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(NewerSchemaError);
    expect((refusal as NewerSchemaError).unknown).toEqual([future]);
    expect((refusal as Error).message).toMatch(/newer than this build.*2099-01-01T0000-from-a-newer-build/);
    expect(await tablesOf(db)).toEqual(tables);
    expect(await readSchemaState(db)).toEqual({ applied: [...all.slice(0, 3), future], pending: all.slice(3), unknown: [future] });
  });

  it('bringing a database back to an earlier migration is refused: forward only', async () => {
    const db = await emptyDatabase();
    const all = knownMigrations();
    await migrateThrough(db, all[3] as string);
    await expect(migrateThrough(db, all[1] as string)).rejects.toBeInstanceOf(NewerSchemaError);
    await expect(migrateThrough(db, 'no-such-migration')).rejects.toBeInstanceOf(MigrationError);
    expect((await readSchemaState(db)).applied).toEqual(all.slice(0, 4));
  });
});

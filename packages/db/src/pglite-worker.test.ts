import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { connectDatabase, type DatabaseHandle } from './connect.ts';
import { DataDirLockedError } from './data-dir-lock.ts';
import { migrateToLatest } from './migrate.ts';

const open: DatabaseHandle[] = [];
const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'svc-db-'));
  dirs.push(d);
  return d;
};
const connect = async (dataDir: string) => {
  const h = await connectDatabase({ dataDir });
  open.push(h);
  return h;
};
afterEach(async () => {
  while (open.length) await open.pop()?.destroy();
  while (dirs.length) rmSync(dirs.pop() as string, { recursive: true, force: true });
});

describe('the embedded database (PGlite on a worker thread, in SVC_DATA_DIR)', () => {
  it('keeps what was committed across a close and a reopen', async () => {
    const dir = tempDir();
    const first = await connect(dir);
    await migrateToLatest(first.db);
    await first.db
      .insertInto('setup_tokens')
      .values({ token_hash: 'abc', created_at: new Date('2026-01-01T00:00:00Z') })
      .execute();
    await first.destroy();
    open.pop();
    const second = await connect(dir);
    const rows = await second.db.selectFrom('setup_tokens').selectAll().execute();
    expect(rows).toEqual([{ token_hash: 'abc', created_at: new Date('2026-01-01T00:00:00Z') }]);
  });

  it('carries PostgreSQL error codes across the thread boundary', async () => {
    const h = await connect(tempDir());
    await migrateToLatest(h.db);
    const row = { token_hash: 'dup', created_at: new Date() };
    await h.db.insertInto('setup_tokens').values(row).execute();
    const err = await h.db
      .insertInto('setup_tokens')
      .values(row)
      .execute()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: '23505' });
    expect((err as Error).message).toMatch(/duplicate key/);
  });

  it('rolls back a failed transaction and keeps concurrent transactions apart', async () => {
    const h = await connect(tempDir());
    await migrateToLatest(h.db);
    const failing = h.db.transaction().execute(async (trx) => {
      await trx.insertInto('setup_tokens').values({ token_hash: 'a', created_at: new Date() }).execute();
      await new Promise((r) => setTimeout(r, 30));
      throw new Error('abort');
    });
    const observer = h.db.transaction().execute(async (trx) => {
      const r = await sql<{ n: number }>`select count(*)::int as n from setup_tokens`.execute(trx);
      return r.rows[0]?.n;
    });
    await expect(failing).rejects.toThrow('abort');
    expect(await observer).toBe(0);
    expect(await h.db.selectFrom('setup_tokens').selectAll().execute()).toEqual([]);
  });

  it('refuses a second process-level open of the same data dir while the first holds it', async () => {
    const dir = tempDir();
    await connect(dir);
    await expect(connectDatabase({ dataDir: dir })).rejects.toBeInstanceOf(DataDirLockedError);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type DatabaseHandle } from './connect.ts';

// A statement marked `/* prepared:<name> */` runs as a named prepared statement on PostgreSQL
// (planned once per connection); unmarked ones do not; the marker is a plain comment to PGlite.
const url = process.env.DATABASE_URL;
let handle: DatabaseHandle;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-prepared-'));
  handle = await connectDatabase({ url, dataDir: dir, poolSize: 2, ...(url ? { schema: `prepared_${process.pid}` } : {}) });
});
afterAll(async () => {
  if (url) await sql`drop schema if exists ${sql.id(`prepared_${process.pid}`)} cascade`.execute(handle.db);
  await handle.destroy();
  rmSync(dir, { recursive: true, force: true });
});

describe('named prepared statements by marker', () => {
  it('a marked statement gives the same rows as unmarked, with its parameters, again and again', async () => {
    for (const n of [1, 2, 3]) {
      const marked = await sql<{ doubled: number }>`/* prepared:test_doubled */ select (${n}::int * 2) as doubled`.execute(handle.db);
      expect(marked.rows).toEqual([{ doubled: n * 2 }]);
    }
  });

  it.skipIf(!url)('on PostgreSQL the marked statement is prepared on its connection under its name; an unmarked one is not', async () => {
    const names = await handle.db.connection().execute(async (conn) => {
      await sql`/* prepared:test_pinned */ select 1 as one`.execute(conn);
      await sql`select 2 as two`.execute(conn);
      return (await sql<{ name: string }>`select name from pg_prepared_statements order by name`.execute(conn)).rows.map((r) => r.name);
    });
    expect(names).toContain('test_pinned');
    expect(names.filter((n) => n !== 'test_pinned' && n !== 'test_doubled')).toEqual([]);
  });
});

import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { fromPGlite } from './connect.ts';
import { migrateToLatest } from './migrate.ts';
import { PGLITE_EXTENSIONS } from './pglite-extensions.ts';

/**
 * docs/data-model.md is where a reader looks for what a table holds and who writes it: a table
 * a migration adds without a row there is a table nobody can find out about (eight had gone
 * missing before this check). A row is a line starting `| \`<table>\` |`.
 */

const handle = fromPGlite(new PGlite({ extensions: PGLITE_EXTENSIONS }));
afterAll(() => handle.destroy());

describe('docs/data-model.md', () => {
  it('has a row for every table the migrations make, and none for a table that does not exist', async () => {
    await migrateToLatest(handle.db);
    const tables = (
      await sql<{ name: string }>`select table_name as name from information_schema.tables
        where table_schema = current_schema() and table_type = 'BASE TABLE' and table_name not like 'kysely_%'
        order by table_name`.execute(handle.db)
    ).rows.map((r) => r.name);
    const doc = readFileSync(new URL('../../../docs/data-model.md', import.meta.url), 'utf8');
    const documented = [...doc.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]).sort();
    expect(tables.length).toBeGreaterThan(30);
    expect(documented).toEqual(tables);
  });
});

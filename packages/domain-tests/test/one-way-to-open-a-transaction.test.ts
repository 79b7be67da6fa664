import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const THE_ONE_PLACE = 'packages/domain/src/shared/unit-of-work.ts';
/**
 * Below the domain, the data store's own dump and load (svc backup, svc restore): one read-only
 * snapshot of every table, and a restore that drops and re-creates the schema. Neither is a use
 * case (no revisions, audit or events ride on them) and packages/db cannot reach the domain's
 * unitOfWork (dependency direction); each is one transaction, opened in one place.
 */
const THE_STORE_ITSELF = ['packages/db/src/backup/write-backup.ts', 'packages/db/src/backup/restore-backup.ts'];

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'gen') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (/\.(ts|mts)$/.test(entry.name) && !/\.test\.ts$/.test(entry.name)) yield path;
  }
}

describe('one way to open a transaction', () => {
  it('no code of the apps, packages or benches opens a transaction but unitOfWork', () => {
    const offenders: string[] = [];
    for (const top of ['apps', 'packages', 'bench']) {
      for (const file of sources(join(ROOT, top))) {
        const rel = relative(ROOT, file);
        if (rel === THE_ONE_PLACE || THE_STORE_ITSELF.includes(rel)) continue;
        const text = readFileSync(file, 'utf8');
        // kysely's db.transaction() (also split over lines: `db\n  .transaction()`), and raw BEGINs.
        if (/\.\s*transaction\s*\(\s*\)/.test(text) || /sql`\s*begin\b/i.test(text)) offenders.push(rel);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('the one place does open them (this test would pass vacuously if it moved)', () => {
    expect(readFileSync(join(ROOT, THE_ONE_PLACE), 'utf8')).toMatch(/\.transaction\(\)/);
    for (const file of THE_STORE_ITSELF) expect(readFileSync(join(ROOT, file), 'utf8')).toMatch(/\.\s*transaction\(\)/);
  });
});

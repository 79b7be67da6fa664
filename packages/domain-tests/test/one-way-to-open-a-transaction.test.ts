import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const THE_ONE_PLACE = 'packages/domain/src/shared/unit-of-work.ts';

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
        if (rel === THE_ONE_PLACE) continue;
        const text = readFileSync(file, 'utf8');
        // kysely's db.transaction() (also split over lines: `db\n  .transaction()`), and raw BEGINs.
        if (/\.\s*transaction\s*\(\s*\)/.test(text) || /sql`\s*begin\b/i.test(text)) offenders.push(rel);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('the one place does open them (this test would pass vacuously if it moved)', () => {
    expect(readFileSync(join(ROOT, THE_ONE_PLACE), 'utf8')).toMatch(/\.transaction\(\)/);
  });
});

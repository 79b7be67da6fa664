import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

export const LANGS = ['en', 'ru', 'fa', 'zh'] as const;

const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;

/**
 * A language's whole catalogue: `<src>/locales/<lang>.json` and the parts an app loads later
 * (`<src>/locales/<part>/<lang>.json`, e.g. the portal's signed-in screens), merged. A top-level
 * key in two parts is an error: one would hide the other at run time.
 */
export function catalogue(src: string, lang: string): Record<string, unknown> {
  const dir = join(src, 'locales');
  const whole = read(join(dir, `${lang}.json`));
  for (const part of readdirSync(dir).filter((name) => statSync(join(dir, name)).isDirectory())) {
    const more = read(join(dir, part, `${lang}.json`));
    for (const key of Object.keys(more)) {
      if (key in whole) throw new Error(`${lang}: "${key}" is in locales/${lang}.json and locales/${part}/${lang}.json`);
      whole[key] = more[key];
    }
  }
  return whole;
}

/** Every key of a catalogue, dotted. */
export function keys(tree: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(tree).flatMap(([k, v]) =>
    v && typeof v === 'object' ? keys(v as Record<string, unknown>, `${prefix}${k}.`) : [`${prefix}${k}`],
  );
}
const base = (key: string) => key.replace(/_(zero|one|two|few|many|other)$/, '');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.(ts|tsx)$/.test(name) ? [path] : [];
  });
}

/**
 * The catalogue rules of a web app whose sources are in `src` (its locales/ beside them): every
 * string of the app is in a catalogue, and every language has every one: English, Russian,
 * Persian and Simplified Chinese carry the same keys (plural forms aside, which each language has
 * its own of), none empty; every key the code names exists in English (at least `minNamed`, so a
 * scan that finds nothing fails); counts go through the number formatter.
 */
export function describeCatalogues(app: string, src: string, minNamed: number): void {
  describe(`${app}: the catalogues`, () => {
    it('all four languages carry the same keys, none empty', () => {
      const english = new Set(keys(catalogue(src, 'en')).map(base));
      for (const lang of LANGS) {
        const tree = catalogue(src, lang);
        const own = keys(tree);
        expect(new Set(own.map(base)), lang).toEqual(english);
        const values = own.map((k) => k.split('.').reduce<unknown>((n, p) => (n as Record<string, unknown>)[p], tree));
        expect(
          values.filter((v) => typeof v !== 'string' || v.trim() === ''),
          lang,
        ).toEqual([]);
      }
    });

    it('every key the code names is in the English catalogue', () => {
      const english = new Set(keys(catalogue(src, 'en')).map(base));
      const named = new Set<string>();
      for (const file of sources(src)) {
        const text = readFileSync(file, 'utf8');
        for (const m of text.matchAll(/\bt\('([a-zA-Z]+(?:\.[a-zA-Z]+)+)'/g)) named.add(m[1] as string);
        for (const m of text.matchAll(/\bkey: '([a-zA-Z]+\.[a-zA-Z]+)'/g)) named.add(m[1] as string);
      }
      expect(named.size).toBeGreaterThan(minNamed);
      expect([...named].filter((k) => !english.has(k))).toEqual([]);
    });

    it('a count is written in the reader’s digits: every {{count}} goes through the number formatter', () => {
      for (const lang of LANGS) {
        const raw = readFileSync(join(src, 'locales', `${lang}.json`), 'utf8');
        expect(raw.match(/\{\{count\}\}/g) ?? [], lang).toEqual([]);
        expect(raw, lang).toContain('{{count, number}}');
      }
    });
  });
}

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Every string of the portal is in a catalogue (issue 32.7), and every language has every one:
 * English, Russian, Persian and Simplified Chinese carry the same keys (plural forms aside, which
 * each language has its own of), and every key the code names exists in English.
 */
const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const LANGS = ['en', 'ru', 'fa', 'zh'] as const;
const catalogue = (lang: string) => JSON.parse(readFileSync(join(SRC, 'locales', `${lang}.json`), 'utf8')) as Record<string, unknown>;

function keys(tree: Record<string, unknown>, prefix = ''): string[] {
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

describe('the portal’s catalogues', () => {
  it('all four languages carry the same keys, none empty', () => {
    const english = new Set(keys(catalogue('en')).map(base));
    for (const lang of LANGS) {
      const tree = catalogue(lang);
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
    const english = new Set(keys(catalogue('en')).map(base));
    const named = new Set<string>();
    for (const file of sources(SRC)) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/\bt\('([a-zA-Z]+(?:\.[a-zA-Z]+)+)'/g)) named.add(m[1] as string);
      for (const m of text.matchAll(/\bkey: '([a-zA-Z]+\.[a-zA-Z]+)'/g)) named.add(m[1] as string);
    }
    expect(named.size).toBeGreaterThan(60);
    expect([...named].filter((k) => !english.has(k))).toEqual([]);
  });

  it('a count is written in the reader’s digits: every {{count}} goes through the number formatter', () => {
    for (const lang of LANGS) {
      const raw = readFileSync(join(SRC, 'locales', `${lang}.json`), 'utf8');
      expect(raw.match(/\{\{count\}\}/g) ?? [], lang).toEqual([]);
      expect(raw, lang).toContain('{{count, number}}');
    }
  });

  it('every state, renewal and status hint the API can answer has its words (keys the code builds from values)', () => {
    for (const lang of LANGS) {
      const all = new Set(keys(catalogue(lang)));
      for (const status of ['active', 'limited', 'expired', 'disabled'])
        expect(all.has(`status.${status}`), `${lang} status.${status}`).toBe(true);
      for (const status of ['limited', 'expired', 'disabled'])
        expect(all.has(`statusHint.${status}`), `${lang} statusHint.${status}`).toBe(true);
      for (const r of ['no_reset', 'day', 'week', 'month']) expect(all.has(`renewal.${r}`), `${lang} renewal.${r}`).toBe(true);
    }
  });
});

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderClashMeta } from '../src/clash-meta.ts';
import type { SubscriptionDocument } from '../src/model.ts';
import { shareLinks } from '../src/share-links.ts';
import { renderSingBox } from '../src/sing-box.ts';
import { renderXrayJson } from '../src/xray-json.ts';
import { doc, everyCombination } from './fixtures.ts';

/**
 * Golden files: the every-combination fixture document and an expired one, in each format, compared
 * byte for byte with the files under test/golden. `UPDATE_GOLDEN=1` rewrites them; review the diff
 * before committing. What each file holds is checked by parsing in the per-format tests; these pin
 * the exact bytes a client receives, so a change in them is deliberate.
 */
const dir = join(import.meta.dirname, 'golden');

function golden(file: string, content: string) {
  const path = join(dir, file);
  if (process.env.UPDATE_GOLDEN) writeFileSync(path, content);
  expect(existsSync(path), `${path} is missing: run with UPDATE_GOLDEN=1 and review it`).toBe(true);
  expect(content).toBe(readFileSync(path, 'utf8'));
}

const FORMATS: [string, (d: SubscriptionDocument) => string][] = [
  ['links.txt', (d) => `${shareLinks(d).join('\n')}\n`],
  ['clash-meta.yaml', (d) => renderClashMeta(d)],
  ['sing-box.json', (d) => renderSingBox(d)],
  ['xray.json', (d) => renderXrayJson(d)],
];

describe('golden files', () => {
  it.each(FORMATS)('every protocol x transport x security: every-combination.%s', (ext, render) => {
    golden(`every-combination.${ext}`, render(doc(everyCombination())));
  });

  it.each(FORMATS)('an expired subscription: expired.%s', (ext, render) => {
    golden(`expired.${ext}`, render(doc([], 'expired')));
  });
});

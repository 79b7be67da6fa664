import { fileURLToPath } from 'node:url';
import { PASSWORD_MIN_LENGTH } from '@svc/domain';
import { catalogue, describeCatalogues, keys, LANGS } from '@svc/testkit/web-app-catalogues';
import { describe, expect, it } from 'vitest';
import { PASSWORD_MIN } from '../src/components/new-password.ts';

// Every string of the portal is in a catalogue (issue 32.7), in all four languages.
const SRC = fileURLToPath(new URL('../src/', import.meta.url));
describeCatalogues('the portal', SRC, 60);

describe('the portal’s catalogues: words the code builds from values', () => {
  it('every state, renewal and status hint the API can answer has its words (keys the code builds from values)', () => {
    for (const lang of LANGS) {
      const all = new Set(keys(catalogue(SRC, lang)));
      for (const status of ['active', 'limited', 'expired', 'disabled'])
        expect(all.has(`status.${status}`), `${lang} status.${status}`).toBe(true);
      for (const status of ['limited', 'expired', 'disabled'])
        expect(all.has(`statusHint.${status}`), `${lang} statusHint.${status}`).toBe(true);
      for (const r of ['no_reset', 'day', 'week', 'month']) expect(all.has(`renewal.${r}`), `${lang} renewal.${r}`).toBe(true);
    }
  });
});

describe('the portal’s restated rules', () => {
  it('the new-password minimum the forms say is the one the portal API enforces', () => {
    expect(PASSWORD_MIN).toBe(PASSWORD_MIN_LENGTH);
  });
});

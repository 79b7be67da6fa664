import { describe, expect, it } from 'vitest';
import { methodLabel, statusClass } from './http-labels.ts';
import { scrapeTokenMatches } from './scrape-token.ts';

const TOKEN = 'a-scrape-token-of-enough-length';

describe('the scrape token', () => {
  it('matches only `Bearer <token>` (scheme in any case), nothing longer, shorter or else', () => {
    expect(scrapeTokenMatches(`Bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect(scrapeTokenMatches(`bearer ${TOKEN}`, TOKEN)).toBe(true);
    for (const wrong of [
      undefined,
      '',
      TOKEN,
      `Basic ${TOKEN}`,
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(1)}`,
      'Bearer ',
      `Bearer ${TOKEN} extra`,
    ])
      expect(scrapeTokenMatches(wrong, TOKEN), String(wrong)).toBe(false);
  });
});

describe('HTTP labels stay a fixed set', () => {
  it('methods outside the standard ones are `other`; statuses are classes', () => {
    expect(['GET', 'POST', 'PROPFIND', 'get', 'X'.repeat(100)].map(methodLabel)).toEqual(['GET', 'POST', 'other', 'other', 'other']);
    expect([200, 204, 301, 404, 499, 503, 0, 999].map(statusClass)).toEqual(['2xx', '2xx', '3xx', '4xx', '4xx', '5xx', 'other', 'other']);
  });
});

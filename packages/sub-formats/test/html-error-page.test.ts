import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HTML_PAGE_CSP } from '../src/html-assets.ts';
import { renderErrorPage } from '../src/html-error-page.ts';
import { attr, byId, byTag, findAll, parseHtml, text } from './html-tree.ts';

// Issue 28 item 10: a browser that opens an unknown or old link gets a page, not raw JSON.
const page = (status: number, supportUrl?: string) => {
  const { document, errors } = parseHtml(renderErrorPage(status, { supportUrl }));
  expect(errors).toEqual([]);
  return document;
};
const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

describe('the error page of a link', () => {
  it('says the link is not valid or no longer valid and to ask the provider for the new one (404, and any other 4xx)', () => {
    for (const status of [400, 404, 405]) {
      const root = page(status);
      expect(text(byTag(root, 'h1')[0]!)).toBe('This link is not valid');
      expect(squash(text(byId(root, 'error')))).toContain('not valid, or no longer valid. Ask your provider for the new link');
    }
  });

  it('says to wait on 429 and to try again later on a failure of ours, never that the link is bad', () => {
    expect(text(byTag(page(429), 'h1')[0]!)).toBe('Too many requests');
    for (const status of [500, 503]) {
      expect(text(byTag(page(status), 'h1')[0]!)).toBe('Temporarily unavailable');
      expect(squash(text(page(status)))).not.toMatch(/not valid/);
    }
  });

  it('has the page’s look under the page’s CSP and no script; the same bytes for every token (nothing of it is in the page)', () => {
    const root = page(404);
    expect(byTag(root, 'script')).toEqual([]);
    const hash = (s: string) => `'sha256-${createHash('sha256').update(s).digest('base64')}'`;
    expect(HTML_PAGE_CSP).toContain(`style-src ${hash(text(byTag(root, 'style')[0]!))}`);
    expect(findAll(root, (el) => attr(el, 'src') !== undefined || attr(el, 'style') !== undefined)).toEqual([]);
    expect(renderErrorPage(404)).toBe(renderErrorPage(404));
  });

  it('offers the operator’s support link when there is one, http(s) only, escaped', () => {
    expect(attr(byId(page(404, 'https://t.me/vpn_support?a=1&b=2'), 'support'), 'href')).toBe('https://t.me/vpn_support?a=1&b=2');
    expect(renderErrorPage(404, { supportUrl: 'https://x.example/"><script>' })).not.toContain('"><script>');
    for (const bad of ['javascript:alert(1)', 'not a url', '']) expect(() => byId(page(404, bad), 'support')).toThrow();
  });
});

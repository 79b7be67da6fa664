import { createHash } from 'node:crypto';
import { appsFor, DEFAULT_APP_ORDER, PLATFORMS } from '@svc/client-apps';
import { describe, expect, it } from 'vitest';
import type { AppLinkOptions } from '../src/app-links.ts';
import { HTML_PAGE_CSP, PAGE_SCRIPT } from '../src/html-assets.ts';
import { renderHtmlPage } from '../src/html-page.ts';
import type { ServerEntry, SubscriptionDocument } from '../src/model.ts';
import { PLACEHOLDER_NAMES } from '../src/placeholder.ts';
import { shareLink, shareLinkSkipReason } from '../src/share-links.ts';
import { doc, everyCombination, NON_ACTIVE, vlessServers } from './fixtures.ts';
import { attr, byId, byTag, findAll, hasClass, parseHtml, text } from './html-tree.ts';

/** The browser page, parsed with parse5 (the WHATWG parsing algorithm) and checked element by element. */

const URL_ = 'https://sub.example.com/sub/q3Zx-Lr9_0aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456';
const NOW = new Date('2026-12-01T12:00:00Z'); // the fixture expires 2027-01-31T00:00Z: 60.5 days later

const page = (d: SubscriptionDocument, now = NOW, url = URL_, apps?: AppLinkOptions) => {
  const { document, errors } = parseHtml(renderHtmlPage(d, { subscriptionUrl: url, now, ...(apps ? { apps } : {}) }));
  expect(errors, 'the page parses without a single HTML parse error').toEqual([]);
  return document;
};
const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

describe('renderHtmlPage: the document', () => {
  const root = page(doc(everyCombination()));
  const head = byTag(root, 'head')[0]!;
  const meta = (name: string) => byTag(head, 'meta').find((m) => attr(m, 'name') === name);

  it('is an HTML5 document with lang, charset, viewport, noindex and the title', () => {
    expect(root.mode).toBe('no-quirks'); // <!doctype html>
    expect(attr(byTag(root, 'html')[0]!, 'lang')).toBe('en');
    expect(byTag(head, 'meta').some((m) => attr(m, 'charset') === 'utf-8')).toBe(true);
    expect(attr(meta('viewport')!, 'content')).toBe('width=device-width, initial-scale=1');
    expect(attr(meta('robots')!, 'content')).toContain('noindex');
    expect(text(byTag(head, 'title')[0]!)).toBe('Alice · premium');
    expect(text(byTag(root, 'h1')[0]!)).toBe('Alice · premium');
  });

  it('loads nothing from anywhere: no src, no <link>, no <img>/<iframe>, no style attributes, one inline script', () => {
    expect(findAll(root, (el) => attr(el, 'src') !== undefined)).toEqual([]);
    expect(findAll(root, (el) => ['link', 'img', 'iframe', 'object', 'embed', 'base', 'form'].includes(el.tagName))).toEqual([]);
    expect(findAll(root, (el) => attr(el, 'style') !== undefined)).toEqual([]);
    expect(byTag(root, 'script').map(text)).toEqual([PAGE_SCRIPT]);
    const hrefs = findAll(root, (el) => attr(el, 'href') !== undefined).map((el) => attr(el, 'href')!);
    expect(hrefs.filter((h) => /^(https?|javascript|data):/i.test(h))).toEqual([]);
  });

  it('HTML_PAGE_CSP allows exactly the inline style and script it carries (by hash)', () => {
    const hash = (s: string) => `'sha256-${createHash('sha256').update(s).digest('base64')}'`;
    expect(HTML_PAGE_CSP).toContain(`style-src ${hash(text(byTag(root, 'style')[0]!))}`);
    expect(HTML_PAGE_CSP).toContain(`script-src ${hash(text(byTag(root, 'script')[0]!))}`);
    expect(HTML_PAGE_CSP).toContain("default-src 'none'");
  });

  it('sets the given locale as lang, and falls back to "en" for a malformed one', () => {
    const lang = (locale: string) =>
      attr(byTag(parseHtml(renderHtmlPage(doc([]), { subscriptionUrl: URL_, now: NOW, locale })).document, 'html')[0]!, 'lang');
    expect(lang('ru-RU')).toBe('ru-RU');
    expect(lang('"><script>')).toBe('en');
  });

  it('refuses a subscription URL that is not absolute http(s)', () => {
    for (const bad of ['javascript:alert(1)', '/sub/abc', 'data:text/html,x', 'not a url']) {
      expect(() => renderHtmlPage(doc([]), { subscriptionUrl: bad, now: NOW })).toThrow(/subscriptionUrl/);
    }
  });
});

describe('renderHtmlPage: state, traffic, expiry', () => {
  const WORDS = {
    active: 'Active',
    limited: 'Traffic limit reached',
    expired: 'Expired',
    disabled: 'Disabled',
    pending: 'Awaiting approval',
  };

  it.each(Object.entries(WORDS))('states %s as "%s"', (status, label) => {
    const statusEl = byId(page(doc(vlessServers(), status as SubscriptionDocument['status'])), 'status');
    expect(text(byTag(statusEl, 'strong')[0]!)).toBe(label);
    expect(hasClass(statusEl, `status-${status}`)).toBe(true);
    expect(text(statusEl).length).toBeGreaterThan(label.length + 10); // and a sentence saying what it means
  });

  it('shows used (upload + download) of total in binary units (@svc/format) with a progress bar', () => {
    const root = page(doc([])); // 1 234 567 up + 89 012 345 down of 100 GiB
    expect(text(byId(root, 'used'))).toBe('86.1 MiB');
    expect(text(byId(root, 'total'))).toBe('100 GiB');
    const bar = byId(root, 'usage-bar');
    expect([bar.tagName, attr(bar, 'max'), attr(bar, 'value')]).toEqual(['progress', '100', '0']);
    expect(squash(text(byId(root, 'usage')))).toContain('upload 1.18 MiB · download 84.9 MiB');
  });

  it('says "unlimited" without a limit and draws no bar; caps the bar at 100%, which only a reached limit shows', () => {
    const unlimited = page({ ...doc([]), total_bytes: null });
    expect(text(byId(unlimited, 'total'))).toBe('unlimited');
    expect(byTag(unlimited, 'progress')).toEqual([]);
    const over = page({ ...doc([], 'limited'), upload_bytes: 3 * 2 ** 40, download_bytes: 2 ** 30, total_bytes: 2 * 2 ** 40 });
    expect(text(byId(over, 'used'))).toBe('3 TiB');
    expect(text(byId(over, 'total'))).toBe('2 TiB');
    expect(attr(byId(over, 'usage-bar'), 'value')).toBe('100');
    const almost = page({ ...doc([]), upload_bytes: 0, download_bytes: 2 ** 30 - 1, total_bytes: 2 ** 30 });
    expect(attr(byId(almost, 'usage-bar'), 'value')).toBe('99.9');
  });

  it('gives the expiry date in UTC and how far it is (the nearest whole day, hours under 48), or "never"', () => {
    const expiry = (d: SubscriptionDocument, now: Date) => squash(text(byId(page(d, now), 'expiry-text')));
    expect(expiry(doc([]), NOW)).toBe('2027-01-31 00:00 UTC · in 61 days'); // 60.5 days: the nearest, a half up
    expect(attr(byTag(byId(page(doc([])), 'expiry'), 'time')[0]!, 'datetime')).toBe('2027-01-31T00:00:00.000Z');
    expect(expiry(doc([], 'expired'), new Date('2027-02-03T01:00:00Z'))).toBe('2027-01-31 00:00 UTC · expired 3 days ago');
    expect(expiry(doc([]), new Date('2027-01-01T00:00:05Z'))).toBe('2027-01-31 00:00 UTC · in 30 days');
    expect(expiry(doc([]), new Date('2027-01-30T00:00:00Z'))).toBe('2027-01-31 00:00 UTC · in 24 hours');
    expect(expiry(doc([]), new Date('2027-01-30T23:00:00Z'))).toBe('2027-01-31 00:00 UTC · in 1 hour');
    expect(expiry(doc([], 'expired'), new Date('2027-01-31T05:00:00Z'))).toBe('2027-01-31 00:00 UTC · expired 5 hours ago');
    expect(expiry({ ...doc([]), expires_at: null }, NOW)).toBe('Never expires');
  });
});

describe('renderHtmlPage: import links', () => {
  const title = 'Alice & "Bob" · 🚀';
  const root = page({ ...doc(vlessServers()), title });
  const hrefOf = (id: string) => attr(findAll(byId(root, 'import'), (el) => attr(el, 'data-app') === id)[0]!, 'href')!;
  const query = (href: string) => {
    const u = new URL(href);
    return { scheme: u.protocol, host: u.host, url: u.searchParams.get('url'), name: u.searchParams.get('name'), hash: u.hash };
  };

  it('without a platform: a button for every app with a link, in the order the platforms list them (v2rayN has none: copy and QR)', () => {
    const ids = findAll(byId(root, 'import'), (el) => hasClass(el, 'app')).map((a) => attr(a, 'data-app'));
    const expected = [...new Set(PLATFORMS.flatMap((p) => DEFAULT_APP_ORDER[p]))].filter((id) => id !== 'v2rayn');
    expect(ids).toEqual(expected);
    expect(ids.slice(0, 3)).toEqual(['happ', 'v2rayng', 'hiddify']);
  });

  it('for the browser’s platform: its apps in the operator’s order', () => {
    const ios = page({ ...doc(vlessServers()), title }, NOW, URL_, { platform: 'ios', order: { ios: ['stash', 'happ'] } });
    expect(findAll(byId(ios, 'import'), (el) => hasClass(el, 'app')).map((a) => attr(a, 'data-app'))).toEqual(['stash', 'happ']);
    const windows = page({ ...doc(vlessServers()), title }, NOW, URL_, { platform: 'windows' });
    expect(findAll(byId(windows, 'import'), (el) => hasClass(el, 'app')).map((a) => attr(a, 'data-app'))).toEqual(
      appsFor('windows')
        .filter((a) => a.importLink)
        .map((a) => a.id),
    );
  });

  it('wraps the subscription URL the way each app reads it', () => {
    // Happ, Streisand: the URL appended as is.
    expect(hrefOf('happ')).toBe(`happ://add/${URL_}`);
    expect(hrefOf('streisand')).toBe(`streisand://import/${URL_}`);
    // Hiddify: the app takes path.substring(1) + query after hiddify://import; the fragment names it.
    const hiddify = new URL(hrefOf('hiddify'));
    expect([hiddify.host, hiddify.pathname.slice(1) + hiddify.search, decodeURIComponent(hiddify.hash.slice(1))]).toEqual([
      'import',
      URL_,
      title,
    ]);
    // v2rayNG: ?url= percent-encoded (the app decodes it once more, which leaves this URL unchanged); the fragment names it.
    const v2 = query(hrefOf('v2rayng'));
    expect([v2.scheme, v2.host, v2.url, decodeURIComponent(v2.url!), decodeURIComponent(v2.hash.slice(1))]).toEqual([
      'v2rayng:',
      'install-config',
      URL_,
      URL_,
      title,
    ]);
    // Clash Verge Rev: install-config?name=…&url=… with url last.
    expect(query(hrefOf('clash-verge'))).toMatchObject({ scheme: 'clash:', host: 'install-config', url: URL_, name: title });
    expect(hrefOf('clash-verge').endsWith(`&url=${encodeURIComponent(URL_)}`)).toBe(true);
    // sing-box: import-remote-profile?url=<encoded>#<encoded name>.
    expect(hrefOf('sing-box')).toBe(`sing-box://import-remote-profile?url=${encodeURIComponent(URL_)}#${encodeURIComponent(title)}`);
    // Karing: install-config?url=&name=, both encoded.
    expect(hrefOf('karing')).toBe(`karing://install-config?url=${encodeURIComponent(URL_)}&name=${encodeURIComponent(title)}`);
  });

  it('encodes what needs encoding in a URL with a query', () => {
    const url = 'https://sub.example.com/s/t?format=a&b=c d';
    const r = page(doc([]), NOW, url);
    const href = (id: string) => attr(findAll(r, (el) => attr(el, 'data-app') === id)[0]!, 'href')!;
    for (const id of ['v2rayng', 'clash-verge', 'sing-box', 'karing']) expect(query(href(id)).url).toBe(url);
    expect(text(byId(r, 'sub-url'))).toBe(url);
  });

  it('shows the subscription URL with a copy button, and its QR code first', () => {
    expect(text(byId(root, 'sub-url'))).toBe(URL_);
    const copy = findAll(byId(root, 'import'), (el) => el.tagName === 'button');
    expect(copy.map((b) => attr(b, 'data-copy'))).toEqual(['sub-url']);
    expect(byTag(byId(root, 'import'), 'svg')).toHaveLength(1);
  });
});

describe('renderHtmlPage: servers', () => {
  it('lists every server that has a share link, in order: name, link, copy button, QR code', () => {
    const vmessReality: ServerEntry = {
      ...vlessServers().find((s) => s.stream.security === 'reality')!,
      name: 'vmess reality',
      protocol: 'vmess',
    };
    const servers = [...everyCombination(), vmessReality]; // the last one: no share link can express it
    const listed = servers.filter((s) => !shareLinkSkipReason(s));
    expect(listed).toEqual(everyCombination());
    const root = page(doc(servers));
    const items = findAll(byId(root, 'servers'), (el) => hasClass(el, 'server'));
    expect(items.map((li) => text(byTag(li, 'h3')[0]!))).toEqual(listed.map((s) => s.name));
    items.forEach((li, i) => {
      const code = byTag(li, 'code')[0]!;
      expect(text(code)).toBe(shareLink(listed[i]!));
      expect(attr(byTag(li, 'button')[0]!, 'data-copy')).toBe(attr(code, 'id'));
      expect(byTag(li, 'svg')).toHaveLength(1);
    });
    expect(byTag(root, 'svg')).toHaveLength(listed.length + 1); // + the subscription's
  });

  it('still lists a server whose link is too long for a QR code, without the code', () => {
    const long: ServerEntry = { ...vlessServers()[2]!, name: 'long path' };
    long.stream = { ...long.stream, ws: { path: `/${'p'.repeat(3000)}`, host: '' } };
    const li = findAll(page(doc([long])), (el) => hasClass(el, 'server'))[0]!;
    expect(text(byTag(li, 'code')[0]!)).toBe(shareLink(long));
    expect(byTag(li, 'svg')).toEqual([]);
  });

  it.each(NON_ACTIVE)('a %s subscription lists no server, only the placeholder name, and keeps its one QR code', (status) => {
    const root = page(doc(vlessServers(), status));
    expect(findAll(root, (el) => hasClass(el, 'server'))).toEqual([]);
    expect(text(byId(root, 'servers-note'))).toBe(PLACEHOLDER_NAMES[status]);
    expect(byTag(root, 'svg')).toHaveLength(1);
  });

  it('an active subscription without servers, or with none a link can carry, says so', () => {
    expect(text(byId(page(doc([])), 'servers-note'))).toBe(PLACEHOLDER_NAMES.empty);
    const vmessReality: ServerEntry = { ...vlessServers().find((s) => s.stream.security === 'reality')!, protocol: 'vmess' };
    expect(text(byId(page(doc([vmessReality])), 'servers-note'))).toBe(PLACEHOLDER_NAMES.unsupported);
  });
});

describe('renderHtmlPage: escaping', () => {
  const evil = '<script>alert(1)</script> & "x"';
  const server: ServerEntry = { ...vlessServers()[1]!, name: evil };
  const html = renderHtmlPage(
    { ...doc([server]), title: `</title><script>alert(2)</script> 'q' & 🚀` },
    { subscriptionUrl: URL_, now: NOW },
  );
  const { document: root, errors } = parseHtml(html);

  it('keeps names and titles as text: no markup from the document reaches the tree', () => {
    expect(errors).toEqual([]);
    expect(html).not.toContain('<script>alert');
    expect(byTag(root, 'script').map(text)).toEqual([PAGE_SCRIPT]);
    expect(text(byTag(root, 'title')[0]!)).toBe(`</title><script>alert(2)</script> 'q' & 🚀`);
    expect(text(byTag(root, 'h1')[0]!)).toBe(`</title><script>alert(2)</script> 'q' & 🚀`);
    const li = findAll(root, (el) => hasClass(el, 'server'))[0]!;
    expect(text(byTag(li, 'h3')[0]!)).toBe(evil);
    expect(text(byTag(li, 'code')[0]!)).toBe(shareLink(server));
    expect(attr(byTag(li, 'svg')[0]!, 'aria-label')).toBe(`QR code of ${evil}`);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;');
  });
});

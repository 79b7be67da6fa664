import { describe, expect, it } from 'vitest';
import { renderHtmlPage } from '../src/html-page.ts';
import { QR_QUIET_ZONE, qrMatrix, qrSvg } from '../src/qr-svg.ts';
import { shareLink, shareLinkSkipReason } from '../src/share-links.ts';
import { doc, everyCombination } from './fixtures.ts';
import { byId, byTag, decodeQrSvg, findAll, hasClass, parseHtml } from './html-tree.ts';

/**
 * The QR codes really encode what they should: each `<svg>` is rasterized from its path and read
 * back with jsQR (an independent decoder), and the text must equal the URL or share link.
 */

const URL_ = 'https://sub.example.com/sub/q3Zx-Lr9_0aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456';
const svgOf = (markup: string) => byTag(parseHtml(markup).document, 'svg')[0]!;

describe('qrSvg', () => {
  it('decodes back to its text: short, long, UTF-8', () => {
    for (const t of [URL_, 'x', `${URL_}?${'a'.repeat(600)}`, 'vless://id@h:1#🇩🇪 Frankfurt · ünïcode']) {
      expect(decodeQrSvg(svgOf(qrSvg(t, 'label')))).toBe(t);
    }
  });

  it('draws exactly the matrix, inside a quiet zone of 4 modules', () => {
    const { size, dark } = qrMatrix(URL_);
    const svg = qrSvg(URL_, 'x');
    expect(svg).toContain(`viewBox="0 0 ${size + 2 * QR_QUIET_ZONE} ${size + 2 * QR_QUIET_ZONE}"`);
    const drawn = new Set<string>();
    for (const [, x, y, w] of svg.matchAll(/M(\d+) (\d+)h(\d+)v1/g)) {
      for (let i = 0; i < Number(w); i++) drawn.add(`${Number(x) + i - QR_QUIET_ZONE},${Number(y) - QR_QUIET_ZONE}`);
    }
    const expected = new Set<string>();
    for (let y = 0; y < size; y++) for (let x = 0; x < size; x++) if (dark(x, y)) expected.add(`${x},${y}`);
    expect(drawn).toEqual(expected);
  });

  it('is deterministic', () => {
    expect(qrSvg(URL_, 'a')).toBe(qrSvg(URL_, 'a'));
  });
});

describe('the page QR codes', () => {
  const servers = everyCombination().filter((s) => !shareLinkSkipReason(s));
  const root = parseHtml(renderHtmlPage(doc(everyCombination()), { subscriptionUrl: URL_, now: new Date(0) })).document;

  it('the subscription QR code reads as the subscription URL', () => {
    expect(decodeQrSvg(byTag(byId(root, 'import'), 'svg')[0]!)).toBe(URL_);
  });

  it('each server QR code reads as its share link', () => {
    const items = findAll(byId(root, 'servers'), (el) => hasClass(el, 'server'));
    expect(items).toHaveLength(servers.length);
    items.forEach((li, i) => {
      expect(decodeQrSvg(byTag(li, 'svg')[0]!)).toBe(shareLink(servers[i]!));
    });
  });
});

import { describe, expect, it } from 'vitest';
import { renderClashMeta } from '../src/clash-meta.ts';
import { renderHtmlPage } from '../src/html-page.ts';
import type { SubscriptionDocument } from '../src/model.ts';
import { base64List } from '../src/share-links.ts';
import { renderSingBox } from '../src/sing-box.ts';
import { renderXrayJson } from '../src/xray-json.ts';
import { doc, everyCombination } from './fixtures.ts';

/** Same document, same bytes: across calls, across copies, and whatever order the input's keys come in. */

const RENDERERS: [string, (d: SubscriptionDocument) => string][] = [
  ['base64 list', base64List],
  ['clash meta', (d) => renderClashMeta(d)],
  ['sing-box', renderSingBox],
  ['xray json', renderXrayJson],
  ['html page', (d) => renderHtmlPage(d, { subscriptionUrl: 'https://sub.example.com/sub/token', now: new Date('2026-12-01T00:00:00Z') })],
];

/** A deep copy with every object's keys in reverse order. */
function reversedKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(reversedKeys) as T;
  if (value instanceof Date) return new Date(value.getTime()) as T;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([k, v]) => [k, reversedKeys(v)]),
    ) as T;
  return value;
}

describe.each(RENDERERS)('%s', (_name, render) => {
  it('is byte-identical for equal documents, whatever their key order', () => {
    const d = doc(everyCombination());
    const first = render(d);
    expect(render(d)).toBe(first);
    expect(render(reversedKeys(d))).toBe(first);
  });

  it('keeps the servers in document order', () => {
    const servers = everyCombination().filter((s) => s.stream.network === 'tcp');
    const forward = render(doc(servers));
    const backward = render(doc([...servers].reverse()));
    expect(backward).not.toBe(forward);
    expect(render(doc([...servers].reverse().reverse()))).toBe(forward);
  });
});

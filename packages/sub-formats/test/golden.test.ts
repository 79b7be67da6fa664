import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderClashMeta } from '../src/clash-meta.ts';
import { renderHtmlPage } from '../src/html-page.ts';
import type { SubscriptionDocument } from '../src/model.ts';
import { shareLinks } from '../src/share-links.ts';
import { renderSingBox } from '../src/sing-box.ts';
import { renderXrayJson } from '../src/xray-json.ts';
import { doc, everyCombination, shadowsocksServers, trojanServers, vlessServers, vmessServers } from './fixtures.ts';

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

/** The browser page: a small active document (one server per protocol, the emoji one among them) and an expired one. */
describe('golden files: the browser page', () => {
  const opts = {
    subscriptionUrl: 'https://sub.example.com/sub/q3Zx-Lr9_0aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456',
    now: new Date('2026-12-01T12:00:00Z'),
  };
  const pick = (servers: ReturnType<typeof vlessServers>, name: string) => servers.filter((s) => s.name === name);
  const servers = [
    ...pick(vlessServers(), '🇩🇪 Frankfurt · vless #1 & co?'),
    ...pick(vmessServers(), 'vmess ws tls'),
    ...pick(trojanServers(), 'trojan tcp tls'),
    ...pick(shadowsocksServers(), 'ss 2022-blake3-aes-128-gcm'),
  ];

  it('an active subscription: active.page.html', () => {
    expect(servers).toHaveLength(4);
    golden('active.page.html', renderHtmlPage(doc(servers), opts));
  });

  it('an expired subscription: expired.page.html', () => {
    golden('expired.page.html', renderHtmlPage(doc([], 'expired'), { ...opts, now: new Date('2027-02-03T01:00:00Z') }));
  });
});

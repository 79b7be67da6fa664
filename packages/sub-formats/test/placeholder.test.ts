import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderClashMeta } from '../src/clash-meta.ts';
import type { ServerEntry, SubscriptionDocument } from '../src/model.ts';
import { PLACEHOLDER_NAMES, PLACEHOLDER_UUID, placeholderServers, servedServers } from '../src/placeholder.ts';
import { base64List, shareLinks } from '../src/share-links.ts';
import { renderSingBox } from '../src/sing-box.ts';
import { renderXrayJson } from '../src/xray-json.ts';
import { doc, NON_ACTIVE, trojanServers, vlessServers } from './fixtures.ts';

/**
 * A document with nothing to serve renders, in every format, as a valid document with exactly one
 * entry, named for the reason, pointing at 0.0.0.0:1 with the nil uuid over plain VLESS/tcp.
 */

interface Entry {
  name: string;
  address: string;
  port: number;
  uuid: string;
}

function parseLinks(links: string[]): Entry[] {
  return links.map((l) => {
    const u = new URL(l);
    expect(u.protocol).toBe('vless:');
    expect(u.searchParams.get('security')).toBe('none');
    return { name: decodeURIComponent(u.hash.slice(1)), address: u.hostname, port: Number(u.port), uuid: u.username };
  });
}

/** Parses each format and returns its server entries in a common shape. */
const FORMATS: Record<string, (d: SubscriptionDocument) => Entry[]> = {
  'share links': (d) => parseLinks(shareLinks(d)),
  'base64 list': (d) => parseLinks(Buffer.from(base64List(d), 'base64').toString('utf8').split('\n')),
  'clash meta': (d) => {
    const c = parse(renderClashMeta(d)) as { proxies: Record<string, any>[]; 'proxy-groups': { proxies: string[] }[] };
    expect(c['proxy-groups'][1]?.proxies).toEqual(c.proxies.map((p) => p.name));
    return c.proxies.map((p) => {
      expect([p.type, p.tls, p.network]).toEqual(['vless', false, 'tcp']);
      return { name: p.name, address: p.server, port: p.port, uuid: p.uuid };
    });
  },
  'sing-box': (d) => {
    const c = JSON.parse(renderSingBox(d)) as { outbounds: Record<string, any>[] };
    return c.outbounds
      .filter((o) => o.type === 'vless')
      .map((o) => {
        expect(o.tls).toBeUndefined();
        return { name: o.tag, address: o.server, port: o.server_port, uuid: o.uuid };
      });
  },
  'xray json': (d) =>
    (JSON.parse(renderXrayJson(d)) as Record<string, any>[]).map((c) => {
      const vnext = c.outbounds[0].settings.vnext[0];
      expect(c.outbounds[0].streamSettings).toEqual({ network: 'tcp', security: 'none' });
      return { name: c.remarks, address: vnext.address, port: vnext.port, uuid: vnext.users[0].id };
    }),
};

const expectPlaceholder = (entries: Entry[], name: string) =>
  expect(entries).toEqual([{ name, address: '0.0.0.0', port: 1, uuid: PLACEHOLDER_UUID }]);

describe.each(Object.keys(FORMATS))('%s', (format) => {
  const render = FORMATS[format] as (d: SubscriptionDocument) => Entry[];

  it.each(NON_ACTIVE)('a %s subscription: one entry naming the status', (status) => {
    expectPlaceholder(render(doc([], status)), PLACEHOLDER_NAMES[status]);
  });

  it('a non-active document ignores servers it still carries', () => {
    expectPlaceholder(render({ ...doc([], 'disabled'), servers: vlessServers() }), PLACEHOLDER_NAMES.disabled);
  });

  it('an active subscription without servers', () => {
    expectPlaceholder(render(doc([])), 'No servers available');
  });
});

describe('the placeholder rule', () => {
  it('names say the state', () => {
    expect(PLACEHOLDER_NAMES).toMatchObject({
      expired: '⛔ Subscription expired',
      limited: '⛔ Traffic limit reached',
      disabled: '⛔ Subscription disabled',
      pending: '⏳ Awaiting approval',
      empty: 'No servers available',
    });
  });

  it('none for an active document with servers; one otherwise', () => {
    expect(placeholderServers(doc(vlessServers()))).toEqual([]);
    for (const status of NON_ACTIVE) expect(placeholderServers(doc([], status))).toHaveLength(1);
    expect(placeholderServers(doc([]))).toHaveLength(1);
  });

  it('an active document whose servers this format cannot express gets the "for this app" placeholder', () => {
    const xhttpOnly = vlessServers().filter((s) => s.stream.network === 'xhttp');
    expectPlaceholder(FORMATS['sing-box']?.(doc(xhttpOnly)) ?? [], PLACEHOLDER_NAMES.unsupported);
    const plainTrojan = trojanServers().filter((s) => s.stream.security === 'none');
    expectPlaceholder(FORMATS['clash meta']?.(doc(plainTrojan)) ?? [], PLACEHOLDER_NAMES.unsupported);
    // The formats that can express them serve them.
    expect(JSON.parse(renderXrayJson(doc(xhttpOnly)))).toHaveLength(xhttpOnly.length);
    expect(shareLinks(doc(xhttpOnly))).toHaveLength(xhttpOnly.length);
  });

  it('entries no format can render (no credentials) are dropped before the rule applies', () => {
    const broken: ServerEntry = { ...(vlessServers()[0] as ServerEntry), uuid: '' };
    expect(servedServers(doc([broken])).map((s) => s.name)).toEqual([PLACEHOLDER_NAMES.unsupported]);
  });
});

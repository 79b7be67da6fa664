import { request as httpRequest } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { acceptsGzip } from '@svc/http';
import type { TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GZIP_FROM_BYTES } from '../src/sub/encoded-body.ts';
import { type PortalTestServer, startPortal } from './harness.ts';

// GET /sub/{token} gzip'd for the apps that take it (Accept-Encoding), the same document as the
// identity answer once undone; every answer of a link says it varies by Accept-Encoding.

describe('acceptsGzip: the Accept-Encoding rule (RFC 9110 12.5.3)', () => {
  it('gzip or x-gzip listed above q=0, or * above 0 with gzip not listed', () => {
    for (const yes of [
      'gzip',
      'GZIP',
      'gzip, deflate, br',
      'br;q=1.0, gzip;q=0.8',
      'x-gzip',
      '*',
      ' deflate , gzip ',
      'gzip;q=0.001',
      'gzip;q=1',
      'gzip; q=abc',
    ])
      expect(acceptsGzip(yes), yes).toBe(true);
  });
  it('absent, empty, identity only, q=0 (any spelling), * at 0, gzip refused even with * allowed: not gzip', () => {
    for (const no of [
      undefined,
      '',
      'identity',
      'br, deflate',
      'gzip;q=0',
      'gzip; q=0.0',
      'gzip;Q=0.000',
      '*;q=0',
      'gzip;q=0, *',
      'gzipx',
      'gzip-like',
    ])
      expect(acceptsGzip(no), String(no)).toBe(false);
  });
  it('a value longer than any client sends is read as absent, in time linear in its length', () => {
    expect(acceptsGzip(`${'a,'.repeat(600)}gzip`)).toBe(false);
    expect(acceptsGzip(`gzip;${';'.repeat(1100)}`)).toBe(false);
    expect(acceptsGzip(`gzip;q=${'0'.repeat(1100)}`)).toBe(false);
    // Within the bound, parameters without a q leave gzip taken.
    expect(acceptsGzip(`gzip;${';'.repeat(1000)}`)).toBe(true);
  });
});

const BASE = 'https://vpn.example.com';
let s: TestServer;
let portal: PortalTestServer;
let link: string;

beforeAll(async () => {
  portal = await startPortal({ SVC_PUBLIC_BASE_URL: BASE });
  ({ s } = portal);
  const { post } = portal;
  const profile = await post('/api/v1/inbound-profiles', {
    name: 'vmess-ws',
    protocol: 'vmess',
    stream: { network: 'ws', security: 'none', ws: { path: '/vm' } },
  });
  const inbounds: string[] = [];
  for (let i = 0; i < 6; i++) {
    const node = await post('/api/v1/nodes', { name: `gz-${i}`, address: `gz${i}.example.net` });
    inbounds.push((await post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 8443 })).id);
  }
  const group = await post('/api/v1/access-groups', { name: 'gz-g', inbound_ids: inbounds });
  const client = await post('/api/v1/clients', { email: 'gz@example.com' });
  link = (await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] })).link.replace(BASE, '');
});
afterAll(() => portal.stop());

/** One GET with exactly these headers (node:http sends no Accept-Encoding of its own, unlike fetch); the raw bytes back. */
function get(
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const url = new URL(path, s.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode as number, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('GET /sub/{token} and Accept-Encoding', () => {
  it('an app that takes gzip gets the same document gzip’d, smaller, with Content-Encoding and Vary; one that does not gets it as it is', async () => {
    for (const ua of ['v2rayNG/1.9.30', 'clash-verge/v2.2.3', 'SFA/1.11.4']) {
      const plain = await get(link, { 'user-agent': ua });
      const zipped = await get(link, { 'user-agent': ua, 'accept-encoding': 'gzip' });
      expect(plain.status, ua).toBe(200);
      expect(zipped.status, ua).toBe(200);
      expect(plain.headers['content-encoding'], ua).toBeUndefined();
      expect(plain.headers.vary, ua).toBe('accept-encoding');
      expect(zipped.headers['content-encoding'], ua).toBe('gzip');
      expect(zipped.headers.vary, ua).toBe('accept-encoding');
      expect(plain.body.byteLength, ua).toBeGreaterThanOrEqual(GZIP_FROM_BYTES);
      expect(Number(zipped.headers['content-length']), ua).toBe(zipped.body.byteLength);
      expect(zipped.body.byteLength, ua).toBeLessThan(plain.body.byteLength);
      expect(gunzipSync(zipped.body).equals(plain.body), ua).toBe(true);
      // Every header the apps read is the same either way.
      for (const h of ['content-type', 'subscription-userinfo', 'profile-title', 'profile-update-interval', 'content-disposition'])
        expect(zipped.headers[h], `${ua} ${h}`).toBe(plain.headers[h]);
    }
  });

  it('asked again, the gzip’d answer is the same bytes (compressed once, kept with the body)', async () => {
    const a = await get(link, { 'user-agent': 'v2rayNG/1.9.30', 'accept-encoding': 'gzip, deflate' });
    const b = await get(link, { 'user-agent': 'v2rayNG/1.9.30', 'accept-encoding': 'gzip, deflate' });
    expect(b.body.equals(a.body)).toBe(true);
  });

  it('gzip refused (q=0), only identity or br asked, a hostile Accept-Encoding: the identity answer, never a 5xx', async () => {
    const plain = await get(link, { 'user-agent': 'v2rayNG/1.9.30' });
    for (const value of ['gzip;q=0', 'identity', 'br', '*;q=0', `${'x,'.repeat(2000)}gzip`, 'gzip;q=0, *']) {
      const r = await get(link, { 'user-agent': 'v2rayNG/1.9.30', 'accept-encoding': value });
      expect(r.status, value.slice(0, 40)).toBe(200);
      expect(r.headers['content-encoding'], value.slice(0, 40)).toBeUndefined();
      expect(r.body.equals(plain.body), value.slice(0, 40)).toBe(true);
    }
  });

  it('an unknown token is the same 404 problem whatever the Accept-Encoding', async () => {
    const a = await get(`/sub/${'A'.repeat(43)}`, { 'user-agent': 'v2rayNG/1.9.30' });
    const b = await get(`/sub/${'A'.repeat(43)}`, { 'user-agent': 'v2rayNG/1.9.30', 'accept-encoding': 'gzip' });
    expect(a.status).toBe(404);
    expect(b.status).toBe(404);
    expect(b.headers['content-encoding']).toBeUndefined();
    expect(b.body.equals(a.body)).toBe(true);
  });
});

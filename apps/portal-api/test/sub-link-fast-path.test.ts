import { connect } from 'node:net';
import { createHttpService, type HttpService } from '@svc/http';
import type { TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPortalApi, type PortalApi } from '../src/app.ts';
import { type PortalTestServer, startPortal } from './harness.ts';

// Issue 17.4: GET /sub/{token} is answered on node's request listener before Hono (@svc/http
// fast-path.ts), from the answer cache or, without it (SVC_SUB_CACHE_SECONDS=0), after the
// same batched database read the handler makes. Two servers over one runtime and one portal
// (so one cache): one with the fast path, one sending everything through Hono. Every request
// below gets the same bytes from both (the Date header aside; the request id too where the
// caller gives none), with the cache on and off.

const BASE = 'https://vpn.example.com';

/**
 * One request as raw bytes on its own connection; the answer as raw text, read until the
 * server closes (Connection: close). The request side stays open: node ends a connection
 * whose client half-closed without waiting for an answer still being made.
 */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let out = '';
    socket.setEncoding('latin1');
    socket.on('data', (d) => {
      out += d;
    });
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

const ID = 'fixed-request-id-17';
const request = (target: string, headers: string[] = [], method = 'GET', version = '1.1') =>
  `${method} ${target} HTTP/${version}\r\nHost: 127.0.0.1\r\n${headers.map((h) => `${h}\r\n`).join('')}Connection: close\r\n\r\n`;
/** The answer with its Date header blanked (node writes the second it was sent). */
const stable = (answer: string) => answer.replace(/\r\nDate: [^\r]+\r\n/, '\r\nDate: -\r\n');

const APPS = ['v2rayNG/1.9.30', 'clash-verge/v2.2.3', 'mihomo/1.19.10', 'SFA/1.11.4', 'HiddifyNext/2.5.7', 'curl/8.5.0'];

describe.each([
  { mode: 'the answer cache on', cacheSeconds: '30' },
  { mode: 'the answer cache off (a database read per request)', cacheSeconds: '0' },
])('GET /sub/{token} before Hono, $mode', ({ cacheSeconds }) => {
  let s: TestServer;
  let portalServer: PortalTestServer;
  let portal: PortalApi;
  let fast: HttpService;
  let hono: HttpService;
  let fastPort: number;
  let honoPort: number;
  let active: string;
  let disabled: string;
  let expired: string;
  let limited: string;
  let revoked: string;
  let activeId: string;
  let wide: string;

  beforeAll(async () => {
    portalServer = await startPortal({ SVC_PUBLIC_BASE_URL: BASE, SVC_SUB_CACHE_SECONDS: cacheSeconds });
    s = portalServer.s;
    const { post } = portalServer;
    const node = await post('/api/v1/nodes', { name: 'Riga', address: 'rix.example.net' });
    const profile = await post('/api/v1/inbound-profiles', {
      name: 'vmess-ws',
      protocol: 'vmess',
      stream: { network: 'ws', security: 'none', ws: { path: '/vm' } },
    });
    const inbound = await post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 8443 });
    const group = await post('/api/v1/access-groups', { name: 'fast-g', inbound_ids: [inbound.id] });
    const client = await post('/api/v1/clients', { email: 'fast@example.com' });
    const make = async () => post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] });
    const a = await make();
    const d = await make();
    const e = await make();
    const l = await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id], traffic_limit_bytes: 1000 });
    await s.deps.db
      .updateTable('subscription_counters')
      .set({ used_bytes: 5000, period_uplink_bytes: 3000, period_downlink_bytes: 2000 })
      .where('subscription_id', '=', l.id)
      .execute();
    // Four servers more: a link long enough to be gzip'd for the apps that take it.
    const more: string[] = [inbound.id];
    for (let i = 0; i < 4; i++) {
      const n = await post('/api/v1/nodes', { name: `Riga-${i}`, address: `rix${i}.example.net` });
      more.push((await post('/api/v1/inbounds', { node_id: n.id, profile_id: profile.id, port: 8443 })).id);
    }
    const wideGroup = await post('/api/v1/access-groups', { name: 'fast-wide', inbound_ids: more });
    const w = await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [wideGroup.id] });
    const r = await make();
    const rotated = await s.api.post(`/api/v1/subscriptions/${r.id}/rotate-credentials`, {}, { token: portalServer.token });
    expect(rotated.status).toBe(200);
    expect(rotated.body.link).not.toBe(r.link);
    expect((await s.api.patch(`/api/v1/subscriptions/${d.id}`, { status: 'disabled' }, { token: portalServer.token })).status).toBe(200);
    await s.deps.db
      .updateTable('subscriptions')
      .set({ expires_at: new Date(s.clock.now().getTime() - 1000) })
      .where('id', '=', e.id)
      .execute();
    const path = (link: string) => new URL(link).pathname;
    [active, disabled, expired, limited, revoked, activeId] = [path(a.link), path(d.link), path(e.link), path(l.link), path(r.link), a.id];
    wide = path(w.link);

    portal = createPortalApi();
    const mount = (root: Parameters<Parameters<typeof createHttpService>[1]>[0]) => root.route('/', portal.routes);
    fast = createHttpService(s.deps, mount, { host: '127.0.0.1', port: 0 });
    hono = createHttpService(s.deps, mount, { host: '127.0.0.1', port: 0, fastPaths: false });
    fastPort = (await fast.start()).port;
    honoPort = (await hono.start()).port;
    // The first answer also sets the cache's bus subscriptions up; what was read before they
    // are live is dropped once they are (with Redis, a round trip later).
    await raw(fastPort, request(active));
    for (let i = 0; i < 100 && fast.fastAnswered() === 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      await raw(fastPort, request(active));
    }
  });
  afterAll(async () => {
    await fast.stop();
    await hono.stop();
    await portal.stop();
    await portalServer.stop();
  });

  /** Asks both servers twice (the first answer renders and caches it); the second answers must be equal. */
  async function both(req: string): Promise<{ fast: string; hono: string; answeredFast: boolean }> {
    await raw(fastPort, req);
    await raw(honoPort, req);
    const before = fast.fastAnswered();
    const f = await raw(fastPort, req);
    const answeredFast = fast.fastAnswered() > before;
    const h = await raw(honoPort, req);
    return { fast: stable(f), hono: stable(h), answeredFast };
  }

  describe('fast path: the answer is the one Hono sends', () => {
    it('every format chosen by User-Agent, for an active, a disabled, an expired and a limited subscription: same status, headers and body', async () => {
      for (const path of [active, disabled, expired, limited]) {
        for (const ua of APPS) {
          const r = await both(request(path, [`User-Agent: ${ua}`, `X-Request-Id: ${ID}`]));
          expect(r.fast, `${path} ${ua}`).toBe(r.hono);
          expect(r.fast.startsWith('HTTP/1.1 200 OK\r\n'), ua).toBe(true);
          expect(r.answeredFast, `${ua} answered before Hono`).toBe(true);
        }
      }
    });

    it('an app that takes gzip (Accept-Encoding, repeated, refused with q=0): the same bytes, from the fast path', async () => {
      for (const path of [active, disabled, limited, wide]) {
        for (const enc of [
          ['Accept-Encoding: gzip'],
          ['Accept-Encoding: br', 'Accept-Encoding: gzip;q=0.5'],
          ['Accept-Encoding: gzip;q=0'],
          ['Accept-Encoding: *'],
        ]) {
          for (const ua of ['v2rayNG/1.9.30', 'mihomo/1.19.10']) {
            const r = await both(request(path, [`User-Agent: ${ua}`, ...enc, `X-Request-Id: ${ID}`]));
            expect(r.fast, `${path} ${ua} ${enc}`).toBe(r.hono);
            expect(r.answeredFast, `${ua} ${enc} answered before Hono`).toBe(true);
          }
        }
      }
      const zipped = await both(request(wide, ['User-Agent: v2rayNG/1.9.30', 'Accept-Encoding: gzip', `X-Request-Id: ${ID}`]));
      expect(zipped.fast).toContain('\r\ncontent-encoding: gzip\r\n');
      // A link of one server is shorter than gzip pays for: sent as it is.
      const short = await both(request(active, ['User-Agent: v2rayNG/1.9.30', 'Accept-Encoding: gzip', `X-Request-Id: ${ID}`]));
      expect(short.fast).toContain('\r\nvary: accept-encoding\r\n');
      expect(short.fast).not.toContain('content-encoding');
    });

    it('no User-Agent, an Accept that is not a page, a plain query: the same answer, from the fast path', async () => {
      for (const headers of [[], ['Accept: */*'], ['User-Agent: v2rayN/7.10', 'Accept: text/plain, */*']]) {
        const r = await both(request(active, [...headers, `X-Request-Id: ${ID}`]));
        expect(r.fast, headers.join()).toBe(r.hono);
        expect(r.answeredFast, headers.join()).toBe(true);
      }
      const q = await both(request(`${active}?flag=clash&v=2`, ['User-Agent: v2rayNG/1.9.30', `X-Request-Id: ${ID}`]));
      expect(q.fast).toBe(q.hono);
      expect(q.answeredFast).toBe(true);
    });

    it('an unknown or rotated-away token: the same 404 problem, from the fast path, never a 5xx', async () => {
      for (const target of [`/sub/${'A'.repeat(43)}`, `/sub/${'_'.repeat(43)}?x=1`, revoked]) {
        const r = await both(request(target, ['User-Agent: v2rayNG/1.9.30', `X-Request-Id: ${ID}`]));
        expect(r.fast, target).toBe(r.hono);
        expect(r.fast.startsWith('HTTP/1.1 404 Not Found\r\n'), target).toBe(true);
        expect(r.fast, target).toContain('\r\ncontent-type: application/problem+json\r\n');
        expect(r.answeredFast, target).toBe(true);
      }
    });

    it('an unknown or rotated-away token asked with text/html in Accept: the same 404 page as Hono (issue 28.10), from the fast path unless a browser’s page is chosen', async () => {
      for (const target of [`/sub/${'A'.repeat(43)}`, revoked]) {
        const r = await both(request(target, ['Accept: text/html', `X-Request-Id: ${ID}`]));
        expect(r.fast, target).toBe(r.hono);
        expect(r.fast.startsWith('HTTP/1.1 404 Not Found\r\n'), target).toBe(true);
        expect(r.fast, target).toContain('\r\ncontent-type: text/html; charset=utf-8\r\n');
        expect(r.fast, target).toContain('This link is not valid');
        expect(r.answeredFast, target).toBe(true);
        const browser = await both(
          request(target, [
            'User-Agent: Mozilla/5.0 (X11; Linux x86_64)',
            'Accept: text/html,application/xhtml+xml',
            `X-Request-Id: ${ID}`,
          ]),
        );
        expect(browser.fast, target).toBe(browser.hono);
        expect(browser.fast, target).toBe(r.fast);
        expect(browser.answeredFast, target).toBe(false);
      }
      const app = await both(request(revoked, ['User-Agent: v2rayNG/1.9.30', 'Accept: text/html', `X-Request-Id: ${ID}`]));
      expect(app.fast).toContain('\r\ncontent-type: application/problem+json\r\n');
      expect(app.answeredFast).toBe(true);
    });

    it('hostile requests to a link: a body on the GET, a long query, odd headers: the same answer as Hono, no 5xx', async () => {
      const ua = 'User-Agent: v2rayNG/1.9.30';
      const reqs = [
        request(active, [ua, `X-Request-Id: ${ID}`, 'Content-Length: 5']).replace(/\r\n\r\n$/, '\r\n\r\nhello'),
        request(`${active}?${'a'.repeat(4000)}`, [ua, `X-Request-Id: ${ID}`]),
        request(active, [ua, 'X-Request-Id: a, b']),
        request(active, [ua, `X-Request-Id: ${ID}`, `X-Request-Id: ${ID}`]),
        request(active, [ua, `X-Request-Id: ${ID}`, `Accept: ${'x/y, '.repeat(100)}*/*`]),
        request(active, ['User-Agent: v2rayNG/1.9.30\u00e9\u0001', `X-Request-Id: ${ID}`]),
        request(limited, [`User-Agent: ${'z'.repeat(5000)}`, `X-Request-Id: ${ID}`]),
      ];
      for (const req of reqs) {
        const r = await both(req);
        const uuid = /\r\nx-request-id: [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\r\n/;
        const same = (a: string) => a.replace(uuid, '\r\nx-request-id: -\r\n');
        expect(same(r.fast), req.slice(0, 80)).toBe(same(r.hono));
        expect(r.fast, req.slice(0, 80)).toMatch(/^HTTP\/1\.1 [234]\d\d /);
      }
    });

    it('the request id: the caller’s when plain, else a new UUID, in the same place as Hono writes it', async () => {
      const given = await both(request(active, ['User-Agent: v2rayNG/1.9.30', `X-Request-Id: ${ID}`]));
      expect(given.fast).toContain(`\r\nx-request-id: ${ID}\r\n`);
      for (const id of ['', 'has space', 'x'.repeat(256)]) {
        const r = await both(request(active, ['User-Agent: v2rayNG/1.9.30', ...(id ? [`X-Request-Id: ${id}`] : [])]));
        const uuid = /\r\nx-request-id: [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\r\n/;
        expect(r.fast, id).toMatch(uuid);
        expect(r.fast.replace(uuid, '\r\nx-request-id: -\r\n'), id).toBe(r.hono.replace(uuid, '\r\nx-request-id: -\r\n'));
      }
    });

    it('a change drops the cached answer at commit: the next fast answer is the new one', async () => {
      const req = request(active, ['User-Agent: v2rayNG/1.9.30', `X-Request-Id: ${ID}`]);
      const before = await both(req);
      expect((await s.api.patch(`/api/v1/subscriptions/${activeId}`, { status: 'disabled' }, { token: portalServer.token })).status).toBe(
        200,
      );
      await new Promise((r) => setTimeout(r, 50)); // the bus delivers on a later turn
      try {
        const first = stable(await raw(fastPort, req));
        expect(first).not.toBe(before.fast);
        expect(Buffer.from(first.split('\r\n\r\n')[1] as string, 'base64').toString()).toMatch(/disabled/i);
        const after = await both(req);
        expect(after.fast).toBe(after.hono);
        expect(after.fast).toBe(first);
      } finally {
        expect((await s.api.patch(`/api/v1/subscriptions/${activeId}`, { status: 'active' }, { token: portalServer.token })).status).toBe(
          200,
        );
        await new Promise((r) => setTimeout(r, 50));
      }
      expect((await both(req)).fast).toBe(before.fast);
    });
  });

  describe('fast path: everything else is Hono’s, unchanged', () => {
    const left = async (req: string) => {
      const r = await both(req);
      expect(r.answeredFast, req.split('\r\n')[0]).toBe(false);
      expect(r.fast, req.split('\r\n')[0]).toBe(r.hono);
      return r.fast;
    };

    it('HEAD, POST, PUT, DELETE and OPTIONS on a cached link', async () => {
      for (const method of ['HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS'])
        await left(request(active, ['User-Agent: v2rayNG/1.9.30', `X-Request-Id: ${ID}`], method));
    });

    it('unknown, malformed and encoded tokens, odd paths, absolute-form targets', async () => {
      const token = active.slice('/sub/'.length);
      for (const target of [
        '/sub/nope',
        `${active}/`,
        `/sub/${token.slice(0, 10)}%2F${token.slice(13)}`,
        `/sub/${token.slice(0, 42)}%41`,
        `${active}%00`,
        `${active}?q=%00`,
        `/x/..${active}`,
        `/SUB/${token}`,
        `http://127.0.0.1${active}`,
        `${active}?q=<a>`,
      ])
        await left(request(target, ['User-Agent: v2rayNG/1.9.30', `X-Request-Id: ${ID}`]));
    });

    it('a browser (the page is rendered per request), repeated User-Agents, odd Host headers, HTTP/1.0 without Host', async () => {
      await left(
        request(active, ['User-Agent: Mozilla/5.0 (X11; Linux x86_64)', 'Accept: text/html,application/xhtml+xml', `X-Request-Id: ${ID}`]),
      );
      await left(request(active, ['User-Agent: v2rayNG/1.9.30', 'User-Agent: clash-verge/v2.2.3', `X-Request-Id: ${ID}`]));
      for (const host of ['a/b', '0x7f.1', 'exa mple', '1.2.3.4:99999', 'user@host']) {
        const req = request(active, ['User-Agent: v2rayNG/1.9.30', `X-Request-Id: ${ID}`]).replace('Host: 127.0.0.1', `Host: ${host}`);
        await left(req);
      }
      await left(`GET ${active} HTTP/1.0\r\nUser-Agent: v2rayNG/1.9.30\r\nX-Request-Id: ${ID}\r\n\r\n`);
    });

    it('headers over node’s limit are refused by node alike (431)', async () => {
      const answer = await left(request(active, ['User-Agent: v2rayNG/1.9.30', `X-Filler: ${'x'.repeat(20_000)}`]));
      expect(answer.startsWith('HTTP/1.1 431')).toBe(true);
    });
  });

  describe('fast path: only where nothing but the root middlewares runs', () => {
    it('a middleware mounted on /sub turns the fast path off rather than being skipped', async () => {
      const guarded = createHttpService(
        s.deps,
        (root) => {
          root.use('/sub/*', async (c, next) => {
            await next();
            c.res.headers.set('x-extra', 'kept');
          });
          root.route('/', portal.routes);
        },
        { host: '127.0.0.1', port: 0 },
      );
      const { port } = await guarded.start();
      try {
        const req = request(active, ['User-Agent: v2rayNG/1.9.30']);
        await raw(port, req);
        expect(await raw(port, req)).toContain('\r\nx-extra: kept\r\n');
        expect(guarded.fastAnswered()).toBe(0);
      } finally {
        await guarded.stop();
      }
    });
  });
});

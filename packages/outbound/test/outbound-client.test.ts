import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type Socket, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutboundClient, type HostLookup, isOutboundError, type OutboundError } from '../src/index.ts';

// The outbound client against servers on 127.0.0.1 and a resolver stand-in: the policy is
// checked on the address a name resolves to, the connection goes to that address (one lookup
// per request, never a second one), and every limit holds.

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const hits: string[] = [];
let handler: Handler = (_req, res) => res.end('ok');
let server: Server;
let port: number;
let other: Server;
let otherPort: number;
let otherHits = 0;
let tarpit: TcpServer;
let tarpitPort: number;
let resetter: TcpServer;
let resetPort: number;
const held: Socket[] = [];

const listen = async (s: Server | TcpServer): Promise<number> => {
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return (s.address() as { port: number }).port;
};

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(`${req.method} ${req.headers.host} ${req.url}`);
    handler(req, res);
  });
  port = await listen(server);
  other = createServer((_req, res) => {
    otherHits++;
    res.end('other');
  });
  otherPort = await listen(other);
  tarpit = createTcpServer((socket) => held.push(socket));
  tarpitPort = await listen(tarpit);
  resetter = createTcpServer((socket) => socket.resetAndDestroy());
  resetPort = await listen(resetter);
});
afterAll(async () => {
  for (const s of held) s.destroy();
  for (const s of [server, other, tarpit, resetter]) await new Promise((r) => s.close(r));
});

const allowing = (allowPrivateNetworks: boolean, lookup?: HostLookup) =>
  createOutboundClient({ policy: () => ({ allowPrivateNetworks }), lookup });
const failure = async (p: Promise<unknown>): Promise<OutboundError> => {
  try {
    await p;
  } catch (err) {
    if (isOutboundError(err)) return err;
    throw err;
  }
  throw new Error('expected an outbound failure');
};

describe('destinations are checked after resolution, and the checked address is the one connected to', () => {
  it('a name is resolved once per request; the connection goes to that address with Host naming the name', async () => {
    const asked: string[] = [];
    // A rebinding resolver: public-looking the first time would not matter, it answers once per request.
    let answers = [[{ address: '127.0.0.1', family: 4 }], [{ address: '169.254.169.254', family: 4 }]];
    const lookup: HostLookup = async (host) => {
      asked.push(host);
      return answers.shift() ?? [];
    };
    const client = allowing(true, lookup);
    hits.length = 0;
    const answer = await client.request({ url: `http://rebind.test:${port}/x` });
    expect(answer.status).toBe(200);
    expect(asked).toEqual(['rebind.test']);
    expect(hits).toEqual([`GET rebind.test:${port} /x`]);
    // The next request asks again and gets the metadata address: refused, nothing sent.
    expect((await failure(client.request({ url: `http://rebind.test:${port}/y` }))).reason).toBe('refused');
    expect(asked).toEqual(['rebind.test', 'rebind.test']);
    expect(hits).toHaveLength(1);
    answers = [];
  });

  it('a name with a refused and an allowed address connects to the allowed one; only refused ones: refused', async () => {
    const mixed = allowing(true, async () => [
      { address: '169.254.169.254', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ]);
    expect((await mixed.request({ url: `http://mixed.test:${port}/` })).status).toBe(200);
    const metadata = allowing(true, async () => [{ address: 'fd00:ec2::254', family: 6 }]);
    const err = await failure(metadata.request({ url: `http://meta.test:${port}/` }));
    expect(err).toMatchObject({ reason: 'refused', addressClass: 'metadata' });
  });

  it.each([
    ['http://169.254.169.254/latest/meta-data/', 'link-local'],
    ['http://[::ffff:169.254.169.254]/', 'link-local'],
    ['http://2852039166/', 'link-local'],
    ['http://0xa9fea9fe/', 'link-local'],
    ['http://100.100.100.200/', 'metadata'],
    ['http://[fd00:ec2::254]/', 'metadata'],
    ['http://0.0.0.0:1/', 'unspecified'],
    ['http://[::]:1/', 'unspecified'],
    ['http://224.0.0.1/', 'multicast'],
    ['http://255.255.255.255/', 'broadcast'],
  ])('%s is refused even with private networks allowed (%s)', async (url, cls) => {
    for (const allow of [true, false]) {
      const err = await failure(allowing(allow).request({ url, timeoutMs: 2000 }));
      expect(err).toMatchObject({ reason: 'refused', addressClass: cls });
    }
  });

  it('loopback in any spelling, and a name resolving to it (localhost), is refused unless private networks are allowed', async () => {
    for (const host of ['127.0.0.1', '0x7f.0.0.1', '127.1', '0x7f.1', '2130706433', 'localhost']) {
      hits.length = 0;
      const url = `http://${host}:${port}/`;
      expect((await failure(allowing(false).request({ url }))).reason, host).toBe('refused');
      expect(hits, host).toEqual([]);
      expect((await allowing(true).request({ url })).status, host).toBe(200);
      expect(hits, host).toHaveLength(1);
    }
  });

  it('pin() gives non-HTTP protocols the same checked address', async () => {
    expect(await allowing(true).pin('0x7f.1')).toEqual({ address: '127.0.0.1', family: 4 });
    expect((await failure(allowing(false).pin('localhost'))).reason).toBe('refused');
    expect((await failure(allowing(true).pin('[::ffff:169.254.169.254]'))).reason).toBe('refused');
  });
});

describe('limits on every call', () => {
  it('https only: an http URL is refused before any request is made', async () => {
    hits.length = 0;
    const err = await failure(allowing(true).request({ url: `http://127.0.0.1:${port}/`, httpsOnly: true }));
    expect(err.reason).toBe('not-https');
    expect(hits).toEqual([]);
  });

  it('redirects: none followed by default; same-origin ones within the limit; another origin refused without a request to it', async () => {
    handler = (req, res) => {
      if (req.url === '/a') res.writeHead(302, { location: '/b' }).end();
      else if (req.url === '/b') res.writeHead(302, { location: '/c' }).end();
      else if (req.url === '/away') res.writeHead(302, { location: `http://127.0.0.1:${otherPort}/` }).end();
      else res.end(`at ${req.url}`);
    };
    try {
      const client = allowing(true);
      expect((await client.request({ url: `http://127.0.0.1:${port}/a` })).status).toBe(302);
      const followed = await client.request({ url: `http://127.0.0.1:${port}/a`, redirects: 2 });
      expect([followed.status, followed.body.toString(), followed.url]).toEqual([200, 'at /c', `http://127.0.0.1:${port}/c`]);
      expect((await failure(client.request({ url: `http://127.0.0.1:${port}/a`, redirects: 1 }))).reason).toBe('redirect');
      otherHits = 0;
      expect((await failure(client.request({ url: `http://127.0.0.1:${port}/away`, redirects: 3 }))).reason).toBe('redirect');
      expect(otherHits).toBe(0);
      expect((await failure(client.request({ url: `http://127.0.0.1:${port}/a`, method: 'POST', redirects: 3 }))).reason).toBe('redirect');
    } finally {
      handler = (_req, res) => res.end('ok');
    }
  });

  it('an answer over the size limit is refused, declared or streamed', async () => {
    handler = (req, res) => {
      if (req.url === '/declared') res.writeHead(200, { 'content-length': '5000' }).end('x'.repeat(5000));
      else {
        res.writeHead(200);
        res.end('y'.repeat(5000));
      }
    };
    try {
      const client = allowing(true);
      for (const path of ['/declared', '/chunked'])
        expect((await failure(client.request({ url: `http://127.0.0.1:${port}${path}`, maxBytes: 1000 }))).reason).toBe('too-large');
      expect((await client.request({ url: `http://127.0.0.1:${port}/declared`, maxBytes: 5000 })).body.length).toBe(5000);
    } finally {
      handler = (_req, res) => res.end('ok');
    }
  });

  it('refused, reset, closed and silent ports all fail as unreachable (the reason maps no port); the silent one within the time limit', async () => {
    const client = allowing(true);
    const closing = createTcpServer();
    const closedPort = await listen(closing);
    await new Promise((r) => closing.close(r));
    const reasons: string[] = [];
    const started = Date.now();
    for (const p of [closedPort, resetPort, tarpitPort]) {
      const err = await failure(client.request({ url: `http://127.0.0.1:${p}/`, timeoutMs: 800 }));
      reasons.push(err.reason);
    }
    expect(reasons).toEqual(['unreachable', 'unreachable', 'unreachable']);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("the caller's signal ends a call: aborted", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const err = await failure(
      allowing(true).request({ url: `http://127.0.0.1:${tarpitPort}/`, timeoutMs: 5000, signal: controller.signal }),
    );
    expect(err.reason).toBe('aborted');
  });
});

describe("fetch's shape for libraries", () => {
  it('answers a Response under the same policy; a refused destination rejects', async () => {
    const fetch = allowing(true).fetch();
    const res = await fetch(`http://127.0.0.1:${port}/f`, { method: 'POST', body: new URLSearchParams({ a: '1' }) });
    expect([res.status, await res.text()]).toEqual([200, 'ok']);
    expect(hits.at(-1)).toBe(`POST 127.0.0.1:${port} /f`);
    // As fetch fails: a TypeError, the outbound failure as its cause.
    const refused = await allowing(false)
      .fetch()(`http://127.0.0.1:${port}/f`)
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TypeError);
    expect((refused as TypeError).cause).toMatchObject({ name: 'OutboundError', reason: 'refused' });
  });
});

describe('TLS to the pinned address keeps the name for verification', () => {
  it('a certificate for the name is accepted while the connection goes to the address the resolver gave', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-outbound-tls-'));
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-days',
          '2',
          '-subj',
          '/CN=tls.svc.test',
          '-addext',
          'subjectAltName=DNS:tls.svc.test',
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
        ],
        { stdio: 'ignore' },
      );
      const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
      const tls = createHttpsServer({ cert, key: readFileSync(join(dir, 'key.pem'), 'utf8') }, (req, res) => {
        if (req.url === '/to-http') res.writeHead(302, { location: `http://tls.svc.test:${port}/` }).end();
        else res.end(`sni ok ${req.headers.host}`);
      });
      const tlsPort = await listen(tls);
      try {
        const client = allowing(true, async () => [{ address: '127.0.0.1', family: 4 }]);
        const answer = await client.request({ url: `https://tls.svc.test:${tlsPort}/`, extraCa: cert, httpsOnly: true });
        expect(answer.body.toString()).toBe(`sni ok tls.svc.test:${tlsPort}`);
        // Without the CA the certificate is not trusted: the same unreachable as any other failure before an answer.
        expect((await failure(client.request({ url: `https://tls.svc.test:${tlsPort}/` }))).reason).toBe('unreachable');
        // https only holds for redirects too.
        hits.length = 0;
        const err = await failure(
          client.request({ url: `https://tls.svc.test:${tlsPort}/to-http`, extraCa: cert, httpsOnly: true, redirects: 2 }),
        );
        expect(err.reason).toBe('not-https');
        expect(hits).toEqual([]);
      } finally {
        await new Promise((r) => tls.close(r));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

import { request } from 'node:http';
import { connect } from 'node:net';
import { TEXT_RULE } from '@svc/domain';
import { setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let token: string;
beforeAll(async () => {
  s = await startAdminApi();
  token = (await setupOwner(s)).access_token;
});
afterAll(() => s.stop());

const nodeCount = async () => (await s.deps.db.selectFrom('nodes').select('id').execute()).length;

function expectTextRule(res: { status: number; body: any }, field: string) {
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ type: 'urn:svc:problem:validation', errors: { [field]: TEXT_RULE } });
}

/** A raw HTTP/1.1 exchange: what a client that is not a browser or fetch can send. */
function rawHttp(payload: string | Buffer): Promise<{ status: number; text: string }> {
  const { port } = new URL(s.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.end(payload));
    let text = '';
    socket.on('data', (d) => {
      text += d.toString('latin1');
    });
    socket.on('end', () => resolve({ status: Number(text.slice(9, 12)), text }));
    socket.on('error', reject);
  });
}

/** A body sent chunked (no Content-Length), in pieces, as a streaming client sends it. */
function chunkedPost(path: string, pieces: Buffer[]): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${s.url}${path}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, connection: 'close' },
        agent: false,
      },
      (r) => {
        let text = '';
        r.on('data', (d) => {
          text += d;
        });
        r.on('end', () => resolve({ status: r.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', (err) => (err.message.includes('EPIPE') || err.message.includes('ECONNRESET') ? undefined : reject(err)));
    for (const piece of pieces) req.write(piece);
    req.end();
  });
}

describe('every text input goes through the one text rule (issue 12.1)', () => {
  it('a NUL or a lone surrogate in a JSON string is 400 naming the field, and nothing is written', async () => {
    const before = await nodeCount();
    expectTextRule(await s.api.post('/api/v1/nodes', { name: 'x\u0000y', address: 'a.example.net' }, { token }), 'name');
    expectTextRule(await s.api.post('/api/v1/nodes', { name: 'ok', address: 'a\ud800.example.net' }, { token }), 'address');
    expectTextRule(await s.api.post('/api/v1/nodes', { name: 'ok', address: 'a.example.net', tags: ['\udfff'] }, { token }), 'tags.0');
    expect(await nodeCount()).toBe(before);
  });

  it('a NUL or a lone surrogate in a JSON key is 400 naming the object that holds it', async () => {
    const res = await s.api.call('POST', '/api/v1/nodes', undefined, {
      token,
      raw: '{"name":"n","address":"a.example.net","\\ud800":1}',
      headers: { 'content-type': 'application/json' },
    });
    expectTextRule(res, '(body)');
    expect(await nodeCount()).toBe(0);
  });

  it('a NUL in a path id is 400 naming the parameter, never 500', async () => {
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      expectTextRule(await s.api.call(method, '/api/v1/nodes/%00', method === 'PATCH' ? { name: 'x' } : undefined, { token }), 'path.id');
    }
    expectTextRule(await s.api.post('/api/v1/subscriptions/sub_%00x/rotate-credentials', undefined, { token }), 'path.id');
  });

  it('a malformed id is 404 or 400, never 500', async () => {
    expect((await s.api.get('/api/v1/nodes/not-a-node-id', { token })).status).toBe(404);
    expect((await s.api.get('/api/v1/nodes/%ED%A0%80', { token })).status).toBe(404);
    expect((await s.api.get('/api/v1/nodes/%FF%FE', { token })).status).toBe(404);
    expect((await s.api.get(`/api/v1/nodes/${'n'.repeat(10_000)}`, { token })).status).toBe(400);
    expect(s.logs.filter((l) => l.level >= 50)).toEqual([]);
  });

  it('a NUL in a query value is 400 naming the parameter, a NUL in a query key is 400 naming the query', async () => {
    expectTextRule(await s.api.get('/api/v1/admins?email=%00', { token }), 'query.email');
    expectTextRule(await s.api.get('/api/v1/admins?cursor=a%00b', { token }), 'query.cursor');
    expectTextRule(await s.api.get('/api/v1/admins?x%00=1', { token }), 'query');
  });

  it('a User-Agent with a NUL never reaches a handler', async () => {
    const res = await rawHttp(`GET /api/v1/auth/methods HTTP/1.1\r\nHost: x\r\nUser-Agent: a\u0000b\r\nConnection: close\r\n\r\n`);
    expect(res.status).toBe(400);
  });
});

describe('request bodies are UTF-8 JSON within the limit, or refused (issue 12.8)', () => {
  it('a body starting with a byte-order mark is 400 and changes nothing', async () => {
    const res = await s.api.call('POST', '/api/v1/nodes', undefined, {
      token,
      raw: '\ufeff{"name":"bom","address":"a.example.net"}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body.type).toBe('urn:svc:problem:bad-request');
    expect(await nodeCount()).toBe(0);
  });

  it('a charset other than utf-8 is 415 and changes nothing; charset=utf-8 is taken', async () => {
    const body = JSON.stringify({ name: 'utf16', address: 'a.example.net' });
    for (const charset of ['utf-16', 'UTF-16LE', '"iso-8859-1"']) {
      const res = await s.api.call('POST', '/api/v1/nodes', undefined, {
        token,
        raw: body,
        headers: { 'content-type': `application/json; charset=${charset}` },
      });
      expect(res.status, charset).toBe(415);
    }
    expect(await nodeCount()).toBe(0);
    const ok = await s.api.call('POST', '/api/v1/nodes', undefined, {
      token,
      raw: body,
      headers: { 'content-type': 'application/json; charset=UTF-8' },
    });
    expect(ok.status).toBe(201);
    await s.api.delete(`/api/v1/nodes/${ok.body.id}`, { token });
  });

  it('a body that is not valid UTF-8 is 400, not silently repaired', async () => {
    const bytes = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28]), Buffer.from('","address":"a.example.net"}')]);
    const res = await rawHttp(
      Buffer.concat([
        Buffer.from(
          `POST /api/v1/nodes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${bytes.length}\r\nConnection: close\r\n\r\n`,
        ),
        bytes,
      ]),
    );
    expect(res.status).toBe(400);
    expect(await nodeCount()).toBe(0);
  });

  it('a chunked body over the size limit is 413, without Content-Length as with it', async () => {
    const limit = s.config.http.body_limit_bytes;
    const piece = Buffer.from(`{"name":"big","address":"a.example.net","tags":["${'x'.repeat(64 * 1024)}`);
    const pieces = Array.from({ length: Math.ceil(limit / piece.length) + 1 }, (_, i) =>
      i === 0 ? piece : Buffer.alloc(piece.length, 'x'),
    );
    const res = await chunkedPost('/api/v1/nodes', pieces);
    expect(res.status).toBe(413);
    expect(res.body.type).toBe('urn:svc:problem:payload-too-large');
    expect(await nodeCount()).toBe(0);
  });

  it('a chunked body under the limit is read whole and taken', async () => {
    const json = Buffer.from(JSON.stringify({ name: 'chunked', address: 'a.example.net' }));
    const res = await chunkedPost('/api/v1/nodes', [json.subarray(0, 10), json.subarray(10)]);
    expect(res.status).toBe(201);
    await s.api.delete(`/api/v1/nodes/${res.body.id}`, { token });
  });
});

describe('X-Content-Type-Options: nosniff on every API response (issue 12.8)', () => {
  it('success, problem, unknown route and docs all carry it', async () => {
    for (const res of [
      await s.api.get('/api/v1/auth/methods'),
      await s.api.get('/api/v1/auth/me'),
      await s.api.get('/api/v1/nodes/nope', { token }),
      await s.api.get('/nowhere'),
      await s.api.get('/api/v1/openapi.json'),
      await s.api.get('/api/v1/docs'),
      await s.api.get('/healthz'),
    ]) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });
});

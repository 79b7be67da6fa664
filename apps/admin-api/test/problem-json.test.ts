import { oversizedPost, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let token: string;
beforeAll(async () => {
  s = await startAdminApi();
  token = (await setupOwner(s)).access_token;
});
afterAll(() => s.stop());

function expectProblem(res: { status: number; headers: Headers; body: any }, status: number, slug: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/problem+json');
  expect(res.body).toMatchObject({ type: `urn:svc:problem:${slug}`, status });
  expect(typeof res.body.title).toBe('string');
  expect(typeof res.body.detail).toBe('string');
  expect(res.body.errors).toBeTypeOf('object');
}

describe('every error is application/problem+json with type, title, status, detail, errors (spec 4.2, 7.2)', () => {
  it('an unknown route is 404 problem+json', async () => {
    expectProblem(await s.api.get('/api/v1/no-such-thing'), 404, 'route-not-found');
    expectProblem(await s.api.get('/totally/elsewhere'), 404, 'route-not-found');
  });

  it('a wrong method is 405 problem+json with Allow', async () => {
    const res = await s.api.delete('/api/v1/auth/methods');
    expectProblem(res, 405, 'method-not-allowed');
    expect(res.headers.get('allow')).toContain('GET');
    const put = await s.api.call('PUT', '/api/v1/admins/adm_x', { role: 'admin' }, { token });
    expectProblem(put, 405, 'method-not-allowed');
    expect(put.headers.get('allow')?.split(', ').sort()).toEqual(['DELETE', 'GET', 'HEAD', 'PATCH']);
  });

  it('malformed JSON is 400 problem+json and changes nothing', async () => {
    const before = await s.deps.db.selectFrom('admins').select('id').execute();
    const res = await s.api.call('POST', '/api/v1/admins', undefined, {
      token,
      raw: '{"email": "a@example.com",',
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(res, 400, 'malformed-json');
    expect(await s.deps.db.selectFrom('admins').select('id').execute()).toEqual(before);
  });

  it('a body that is not JSON is 415 problem+json', async () => {
    const res = await s.api.call('POST', '/api/v1/auth/login', undefined, {
      raw: 'email=a&password=b',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectProblem(res, 415, 'unsupported-media-type');
  });

  it('failed validation is 400 with a reason per field', async () => {
    const res = await s.api.post('/api/v1/admins', { email: 'nope', role: 'emperor', password: 42 }, { token });
    expectProblem(res, 400, 'validation');
    expect(Object.keys(res.body.errors).sort()).toEqual(['email', 'password', 'role']);
    const query = await s.api.get('/api/v1/audit-log?limit=0&from=yesterday', { token });
    expectProblem(query, 400, 'validation');
    expect(Object.keys(query.body.errors).sort()).toEqual(['query.from', 'query.limit']);
  });

  it('a body over the limit is 413 problem+json', async () => {
    const body = JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(2 * 1024 * 1024) });
    const res = await oversizedPost(`${s.url}/api/v1/auth/login`, body);
    expectProblem(res, 413, 'payload-too-large');
  });

  it('domain errors keep their problem types: 401, 403, 404, 409', async () => {
    expectProblem(await s.api.get('/api/v1/auth/me'), 401, 'unauthenticated');
    expectProblem(await s.api.get('/api/v1/admins/adm_missing', { token }), 404, 'not-found');
    const me = await s.api.get('/api/v1/auth/me', { token });
    expectProblem(await s.api.delete(`/api/v1/admins/${me.body.id}`, { token }), 409, 'conflict');
  });
});

describe('health endpoints', () => {
  it('GET /healthz answers ok and GET /readyz checks the database', async () => {
    expect((await s.api.get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await s.api.get('/readyz')).body).toEqual({ status: 'ok' });
  });
});

describe('request bodies are JSON or refused', () => {
  it('a body without Content-Type is 415, not silently ignored', async () => {
    const me = await s.api.get('/api/v1/auth/me', { token });
    const res = await s.api.call('PATCH', `/api/v1/admins/${me.body.id}`, undefined, {
      token,
      raw: '{"email":"changed@example.com"}',
      headers: { 'content-type': '' },
    });
    expect(res.status).toBe(415);
    expect((await s.api.get('/api/v1/auth/me', { token })).body.email).toBe(me.body.email);
  });

  it('a JSON body with a media type the parser does not take is 415', async () => {
    const res = await s.api.call('POST', '/api/v1/auth/login', undefined, {
      raw: '{"email":"a@example.com","password":"x"}',
      headers: { 'content-type': 'Application/JSON' },
    });
    expect(res.status).toBe(415);
  });
});

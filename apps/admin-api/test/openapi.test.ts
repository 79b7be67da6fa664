import SwaggerParser from '@apidevtools/swagger-parser';
import type { TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startAdminApi();
});
afterAll(() => s.stop());

describe('GET /api/v1/openapi.json (spec 4.2, 9.5)', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const res = await s.api.get('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    await expect(SwaggerParser.validate(structuredClone(res.body))).resolves.toBeTruthy();
  });

  it('declares every admin route of this surface with its schemas', async () => {
    const { paths } = (await s.api.get('/api/v1/openapi.json')).body;
    const ops = Object.entries(paths as Record<string, object>).flatMap(([p, item]) =>
      Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`),
    );
    expect(ops.sort()).toEqual(
      [
        'GET /api/v1/auth/methods',
        'POST /api/v1/setup',
        'POST /api/v1/auth/login',
        'POST /api/v1/auth/refresh',
        'POST /api/v1/auth/logout',
        'GET /api/v1/auth/me',
        'GET /api/v1/admins',
        'POST /api/v1/admins',
        'GET /api/v1/admins/{id}',
        'PATCH /api/v1/admins/{id}',
        'DELETE /api/v1/admins/{id}',
        'GET /api/v1/audit-log',
      ].sort(),
    );
    expect(paths['/api/v1/admins'].post.requestBody.content['application/json'].schema).toBeDefined();
    expect(paths['/api/v1/admins'].get.security).toEqual([{ bearer: [] }]);
  });

  it('serves a docs UI at /api/v1/docs', async () => {
    const res = await s.api.get('/api/v1/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.text).toContain('/api/v1/openapi.json');
  });
});

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

  it('declares every admin route of spec 4.3/4.4 built so far, each with response schemas and problem responses', async () => {
    const { paths } = (await s.api.get('/api/v1/openapi.json')).body as { paths: Record<string, Record<string, any>> };
    const ops = Object.entries(paths).flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`));
    const crud = (base: string, ops: string[] = ['GET', 'POST']) => ops.map((m) => `${m} /api/v1/${base}`);
    const one = (base: string, ops: string[] = ['GET', 'PATCH', 'DELETE']) => ops.map((m) => `${m} /api/v1/${base}/{id}`);
    const expected = [
      'GET /api/v1/auth/methods',
      'POST /api/v1/setup',
      'POST /api/v1/auth/login',
      'POST /api/v1/auth/refresh',
      'POST /api/v1/auth/logout',
      'GET /api/v1/auth/me',
      'GET /api/v1/auth/oauth/{provider}/redirect',
      'GET /api/v1/auth/oauth/{provider}/callback',
      'POST /api/v1/auth/oauth/{provider}/link',
      'GET /api/v1/auth/identities',
      'DELETE /api/v1/auth/identities/{provider}',
      ...crud('admins'),
      ...one('admins'),
      ...crud('nodes'),
      ...one('nodes'),
      'POST /api/v1/nodes/{id}/enroll-token',
      'POST /api/v1/nodes/{id}/restart-xray',
      'POST /api/v1/nodes/{id}/upgrade-agent',
      'GET /api/v1/nodes/{id}/logs',
      'GET /api/v1/nodes/{id}/logs/stream',
      ...crud('inbound-profiles'),
      ...one('inbound-profiles'),
      ...crud('inbounds'),
      ...one('inbounds'),
      ...crud('chains'),
      ...one('chains'),
      ...crud('certificates'),
      ...one('certificates'),
      'POST /api/v1/certificates/{id}/renew',
      ...crud('dns-providers'),
      ...one('dns-providers'),
      'POST /api/v1/dns-providers/{id}/check',
      ...crud('acme-accounts'),
      ...one('acme-accounts', ['GET', 'DELETE']),
      ...crud('access-groups'),
      ...one('access-groups'),
      ...crud('clients'),
      ...one('clients'),
      'POST /api/v1/clients/{id}/approve',
      'POST /api/v1/clients/{id}/reject',
      ...crud('subscriptions'),
      ...one('subscriptions'),
      'POST /api/v1/subscriptions/{id}/rotate-credentials',
      'GET /api/v1/subscriptions/{id}/usage',
      'GET /api/v1/subscriptions/{id}/usage/nodes',
      // Issue 36: devices registered by HWID, online addresses, what the device limit refuses.
      'GET /api/v1/subscriptions/{id}/devices',
      'DELETE /api/v1/subscriptions/{id}/devices/{deviceId}',
      'GET /api/v1/subscriptions/{id}/link',
      ...crud('plans'),
      ...one('plans'),
      ...crud('payment-providers'),
      ...one('payment-providers'),
      'GET /api/v1/payments',
      'GET /api/v1/payments/{id}',
      // Ours (issue 15): manual payments settled by an admin (docs/payments.md).
      'POST /api/v1/payments/{id}/confirm',
      'POST /api/v1/payments/{id}/cancel',
      'POST /api/v1/payments/{id}/refund',
      'GET /api/v1/stats/overview',
      'GET /api/v1/audit-log',
      // Ours (the spec leaves the resource open; issue 6): what GET /sub/{token} answers.
      'GET /api/v1/settings/subscription-link',
      'PATCH /api/v1/settings/subscription-link',
      'POST /api/v1/settings/subscription-link/preview',
      'GET /api/v1/settings/outbound',
      'PATCH /api/v1/settings/outbound',
      'GET /api/v1/settings/customer-pages',
      'PATCH /api/v1/settings/customer-pages',
      // Ours (issue 14): outbound event webhooks (docs/notifications.md).
      ...crud('webhooks'),
      ...one('webhooks'),
      'GET /api/v1/webhooks/{id}/deliveries',
      'POST /api/v1/webhooks/{id}/test',
      'POST /api/v1/webhooks/{id}/rotate-secret',
      // Ours (issue 30.5): the admin panel's live stream.
      'GET /api/v1/events',
      // Ours (issue 34): imports uploaded as a file, run as jobs (docs/import.md).
      'GET /api/v1/imports',
      'POST /api/v1/imports',
      'GET /api/v1/imports/{id}',
      // Ours (issue 35.3): bulk actions as jobs.
      'POST /api/v1/subscriptions/bulk',
      'POST /api/v1/clients/bulk',
      'GET /api/v1/bulk-jobs',
      'GET /api/v1/bulk-jobs/{id}',
      // Issue 35.1: API tokens.
      'GET /api/v1/api-tokens',
      'POST /api/v1/api-tokens',
      'DELETE /api/v1/api-tokens/{id}',
    ];
    expect(ops.sort()).toEqual(expected.sort());
    for (const [p, item] of Object.entries(paths)) {
      for (const [m, op] of Object.entries(item)) {
        // The OAuth redirect's only success is a 302 to the provider.
        const ok = Object.entries(op.responses as Record<string, any>).filter(
          ([code]) => code.startsWith('2') || (p.endsWith('/redirect') && code === '302'),
        );
        expect(ok.length, `${m} ${p}`).toBeGreaterThan(0);
        for (const [code, res] of ok)
          if (code !== '204' && code !== '302') {
            const type = p.endsWith('/logs/stream') || p.endsWith('/events') ? 'text/event-stream' : 'application/json';
            expect(res.content?.[type]?.schema, `${m} ${p} ${code}`).toBeDefined();
          }
        if (p !== '/api/v1/auth/methods')
          expect(
            Object.keys(op.responses).some((c) => c.startsWith('4')),
            `${m} ${p} problems`,
          ).toBe(true);
        if (
          ['post', 'patch'].includes(m) &&
          !p.endsWith('/logout') &&
          !p.endsWith('/enroll-token') &&
          !p.endsWith('/restart-xray') &&
          !p.endsWith('/upgrade-agent') &&
          !p.endsWith('/approve') &&
          !p.endsWith('/link') &&
          !p.endsWith('/reject') &&
          !p.endsWith('/rotate-credentials') &&
          !p.endsWith('/webhooks/{id}/test') &&
          !p.endsWith('/rotate-secret') &&
          !p.endsWith('/renew') &&
          !/\/payments\/\{id\}\/(confirm|cancel|refund)$/.test(p)
        ) {
          // The import's upload is a file: multipart, not JSON.
          const type = p === '/api/v1/imports' ? 'multipart/form-data' : 'application/json';
          expect(op.requestBody?.content?.[type]?.schema, `${m} ${p} body`).toBeDefined();
        }
      }
    }
    expect(paths['/api/v1/admins']?.get.security).toEqual([{ bearer: [] }]);
  });

  it('serves the docs UI from the pinned swagger-ui-dist on our own origin, with a same-origin-only CSP', async () => {
    const res = await s.api.get('/api/v1/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    // Every script and stylesheet is ours (a path on this origin), and none is inline.
    const refs = [...res.text.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1] as string);
    expect(refs.length).toBeGreaterThanOrEqual(3);
    expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    for (const ref of refs) {
      expect(ref.startsWith('/api/v1/docs/'), ref).toBe(true);
      const asset = await s.api.get(ref);
      expect(asset.status, ref).toBe(200);
      expect(asset.headers.get('content-type'), ref).toMatch(/^(text\/css|text\/javascript|image\/png)/);
      expect(asset.headers.get('x-content-type-options')).toBe('nosniff');
    }
    const bundle = await s.api.get('/api/v1/docs/assets/swagger-ui-bundle.js');
    expect(bundle.text.length).toBeGreaterThan(100_000);
    expect((await s.api.get('/api/v1/docs/init.js')).text).toContain('"/api/v1/openapi.json"');
    expect((await s.api.get('/api/v1/docs/assets/package.json')).status).toBe(404);
    expect((await s.api.get('/api/v1/docs/assets/..%2fpackage.json')).status).toBe(404);
  });

  it('gives every operation a unique operationId and declares the security schemes its operations name (issue 30.8)', async () => {
    const doc = (await s.api.get('/api/v1/openapi.json')).body as {
      paths: Record<string, Record<string, { operationId?: string; security?: Array<Record<string, string[]>> }>>;
      components: { securitySchemes: Record<string, { type: string; in?: string; name?: string; scheme?: string }> };
    };
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    expect(
      ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]+$/.test(id)),
      JSON.stringify(ids),
    ).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.paths['/api/v1/nodes']?.get?.operationId).toBe('listNodes');
    expect(doc.paths['/api/v1/nodes/{id}']?.patch?.operationId).toBe('updateNode');
    expect(doc.paths['/api/v1/subscriptions/{id}/usage']?.get?.operationId).toBe('getSubscriptionUsage');
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.refreshCookie).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'svc_admin_refresh' });
    const named = Object.values(doc.paths).flatMap((item) =>
      Object.values(item).flatMap((op) => (op.security ?? []).flatMap((r) => Object.keys(r))),
    );
    for (const scheme of new Set(named)) expect(doc.components.securitySchemes, scheme).toHaveProperty(scheme);
    expect(doc.paths['/api/v1/auth/refresh']?.post?.security).toEqual([{}, { refreshCookie: [] }]);
  });
});

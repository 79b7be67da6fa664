import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { listCertificates } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, pageOf, pageQuery, READERS, signedPage } from '@svc/http';
import { json } from '../../schemas.ts';
import { CertificateKind, CertificateSchema } from './schemas.ts';

export const CertificatePage = pageOf(CertificateSchema, 'CertificatePage');

export const route = defineRoute({
  method: 'get',
  path: '/certificates',
  tags: ['certificates'],
  summary: 'List certificates, oldest first',
  auth: { scope: 'admin', roles: READERS },
  request: { query: z.object({ ...pageQuery, kind: CertificateKind.optional(), status: z.string().max(32).optional() }) },
  responses: { 200: json(CertificatePage, 'A page of certificates') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(signedPage(c, await listCertificates(actorContext(c), c.req.valid('query'))), 200));

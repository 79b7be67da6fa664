import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { listAcmeAccounts } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, pageOf, pageQuery, READERS, signedPage } from '@svc/http';
import { json } from '../../schemas.ts';
import { AcmeAccountSchema } from './schemas.ts';

export const AcmeAccountPage = pageOf(AcmeAccountSchema, 'AcmeAccountPage');

export const route = defineRoute({
  method: 'get',
  path: '/acme-accounts',
  tags: ['acme-accounts'],
  summary: 'List ACME accounts, oldest first',
  auth: { scope: 'admin', roles: READERS },
  request: { query: z.object({ ...pageQuery, email: z.string().max(254).optional() }) },
  responses: { 200: json(AcmeAccountPage, 'A page of ACME accounts') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(signedPage(c, await listAcmeAccounts(actorContext(c), c.req.valid('query'))), 200));

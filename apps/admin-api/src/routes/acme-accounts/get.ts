import type { OpenAPIHono } from '@hono/zod-openapi';
import { getAcmeAccount } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, READERS } from '@svc/http';
import { IdParam, json, problem } from '../../schemas.ts';
import { AcmeAccountSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/acme-accounts/{id}',
  tags: ['acme-accounts'],
  summary: 'One ACME account',
  auth: { scope: 'admin', roles: READERS },
  request: { params: IdParam },
  responses: { 200: json(AcmeAccountSchema, 'The ACME account'), 404: problem('No such ACME account') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getAcmeAccount(actorContext(c), c.req.valid('param').id), 200));

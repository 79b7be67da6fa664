import type { OpenAPIHono } from '@hono/zod-openapi';
import { getCertificate } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, READERS } from '@svc/http';
import { IdParam, json, problem } from '../../schemas.ts';
import { CertificateSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/certificates/{id}',
  tags: ['certificates'],
  summary: 'One certificate (the key is never returned)',
  auth: { scope: 'admin', roles: READERS },
  request: { params: IdParam },
  responses: { 200: json(CertificateSchema, 'The certificate'), 404: problem('No such certificate') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getCertificate(actorContext(c), c.req.valid('param').id), 200));

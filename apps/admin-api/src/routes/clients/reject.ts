import type { OpenAPIHono } from '@hono/zod-openapi';
import { rejectClient } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam, json } from '../../schemas.ts';
import { ClientSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'post',
  path: '/clients/{id}/reject',
  tags: ['clients'],
  summary: 'Reject an application: pending -> rejected',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: { 200: json(ClientSchema, 'Rejected'), 404: { description: 'No such client' }, 409: { description: 'Not pending' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await rejectClient(actorContext(c), c.req.valid('param').id), 200));

import type { OpenAPIHono } from '@hono/zod-openapi';
import { approveClient } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam, json } from '../../schemas.ts';
import { ClientSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'post',
  path: '/clients/{id}/approve',
  tags: ['clients'],
  summary: 'Approve an application: pending (or rejected, spec 3.1 rule 3) -> active (email_verified_at unchanged)',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: {
    200: json(ClientSchema, 'Approved'),
    404: { description: 'No such client' },
    409: { description: 'Neither pending nor rejected' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await approveClient(actorContext(c), c.req.valid('param').id), 200));

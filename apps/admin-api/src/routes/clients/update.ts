import type { OpenAPIHono } from '@hono/zod-openapi';
import { UpdateClientInput, updateClient } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, IdParam, json } from '../../schemas.ts';
import { ClientSchema } from './schemas.ts';

export const UpdateClientBody = openapi(UpdateClientInput, 'UpdateClient');

export const route = defineRoute({
  method: 'patch',
  path: '/clients/{id}',
  tags: ['clients'],
  summary: 'Update a client (merge); status bans or unbans',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam, ...body(UpdateClientBody) },
  responses: {
    200: json(ClientSchema, 'Updated'),
    404: { description: 'No such client' },
    409: { description: 'Email taken, or a status change other than ban/unban' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await updateClient(actorContext(c), c.req.valid('param').id, c.req.valid('json')), 200));

import type { OpenAPIHono } from '@hono/zod-openapi';
import { CreateClientInput, createClient } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, json } from '../../schemas.ts';
import { ClientSchema } from './schemas.ts';

export const CreateClientBody = openapi(CreateClientInput, 'CreateClient');

export const route = defineRoute({
  method: 'post',
  path: '/clients',
  tags: ['clients'],
  summary: 'Create a client: active, email marked verified (the admin vouches for it)',
  auth: { scope: 'admin', roles: WRITERS },
  request: body(CreateClientBody),
  responses: { 201: json(ClientSchema, 'Created'), 409: { description: 'Email taken' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await createClient(actorContext(c), c.req.valid('json')), 201));

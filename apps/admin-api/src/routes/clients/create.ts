import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { createClient } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { body, Email, json, Password } from '../../schemas.ts';
import { ClientSchema, Note } from './schemas.ts';

export const CreateClientBody = z
  .object({
    email: Email,
    password: Password.optional().openapi({ description: 'omit for a client who signs in by magic link or OAuth only' }),
    note: Note.optional(),
  })
  .strict()
  .openapi('CreateClient');

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

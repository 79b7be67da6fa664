import type { OpenAPIHono } from '@hono/zod-openapi';
import { CreateApiTokenInput, createApiToken } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, json } from '../../schemas.ts';
import { CreatedApiTokenSchema } from './schemas.ts';

export const CreateApiTokenBody = openapi(CreateApiTokenInput, 'CreateApiToken');

export const route = defineRoute({
  method: 'post',
  path: '/api-tokens',
  tags: ['api-tokens'],
  summary: 'A named API token for an integration: scoped, optionally expiring and bound to addresses (the secret is in this answer only)',
  description:
    'Scopes: "role" (every route your role opens), or "<family>:read" / "<family>:write" per resource family (the tags of this document). The token acts as you, with your role as it is at each request: demoted, it shrinks; deleted, it dies.',
  auth: { scope: 'admin', roles: WRITERS, sessionOnly: true },
  request: body(CreateApiTokenBody),
  responses: { 201: json(CreatedApiTokenSchema, 'Created') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await createApiToken(actorContext(c), c.req.valid('json')), 201));

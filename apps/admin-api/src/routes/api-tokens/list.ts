import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { listApiTokens } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { json } from '../../schemas.ts';
import { ApiTokenSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/api-tokens',
  tags: ['api-tokens'],
  summary: "API tokens: an owner sees every admin's, an admin their own (never the secrets)",
  auth: { scope: 'admin', roles: WRITERS, sessionOnly: true },
  responses: { 200: json(z.object({ items: z.array(ApiTokenSchema) }).openapi('ApiTokenList'), 'Tokens') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json({ items: await listApiTokens(actorContext(c)) }, 200));

import type { OpenAPIHono } from '@hono/zod-openapi';
import { portalMe } from '@svc/domain';
import { type AppEnv, defineRoute, json } from '@svc/http';
import { portalContext } from './portal-context.ts';
import { MeSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/me',
  tags: ['account'],
  summary: 'The client and their subscriptions (status, usage, expiry, limit)',
  auth: { scope: 'client' },
  responses: { 200: json(MeSchema, 'The signed-in client') },
});

export const register = (app: OpenAPIHono<AppEnv>) => app.openapi(route, async (c) => c.json(await portalMe(portalContext(c)), 200));

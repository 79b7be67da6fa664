import type { OpenAPIHono } from '@hono/zod-openapi';
import { CreateAdminInput, createAdmin } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, OWNERS, openapi } from '@svc/http';
import { AdminSchema, body, json } from '../../schemas.ts';

export const CreateAdminBody = openapi(CreateAdminInput, 'CreateAdmin');

export const route = defineRoute({
  method: 'post',
  path: '/admins',
  tags: ['admins'],
  summary: 'Create an admin',
  auth: { scope: 'admin', roles: OWNERS },
  request: body(CreateAdminBody),
  responses: { 201: json(AdminSchema, 'Created'), 409: { description: 'Email taken' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await createAdmin(actorContext(c), c.req.valid('json')), 201));

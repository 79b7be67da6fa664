import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { AdminRole, listAdmins } from '@svc/domain';
import { type AppEnv, defineRoute, OWNERS, pageOf, pageQuery, signedPage } from '@svc/http';
import { AdminSchema, json } from '../../schemas.ts';

export const AdminPage = pageOf(AdminSchema, 'AdminPage');
export type AdminPageBody = z.infer<typeof AdminPage>;

export const route = defineRoute({
  method: 'get',
  path: '/admins',
  tags: ['admins'],
  summary: 'List admins, oldest first',
  auth: { scope: 'admin', roles: OWNERS },
  request: { query: z.object({ ...pageQuery, role: AdminRole.optional(), email: z.string().max(254).optional() }) },
  responses: { 200: json(AdminPage, 'A page of admins') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(signedPage(c, await listAdmins(c.get('deps'), c.req.valid('query'))), 200));

import type { OpenAPIHono } from '@hono/zod-openapi';
import { getCustomerPages } from '@svc/domain';
import { type AppEnv, defineRoute, READERS } from '@svc/http';
import { json } from '../../schemas.ts';
import { CustomerPagesSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/settings/customer-pages',
  tags: ['settings'],
  summary:
    'The brand on the customer pages (portal and /sub page): name, logo, colour, support link, announcement, apps per platform, texts per language',
  auth: { scope: 'admin', roles: READERS },
  request: {},
  responses: { 200: json(CustomerPagesSchema, 'Current settings (defaults until first changed)') },
});

export const register = (app: OpenAPIHono<AppEnv>) => app.openapi(route, async (c) => c.json(await getCustomerPages(c.get('deps')), 200));

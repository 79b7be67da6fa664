import type { OpenAPIHono } from '@hono/zod-openapi';
import { UpdateCustomerPagesInput, updateCustomerPages } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, OWNERS, openapi } from '@svc/http';
import { body, json } from '../../schemas.ts';
import { CustomerPagesSchema } from './schemas.ts';

export const UpdateCustomerPagesBody = openapi(UpdateCustomerPagesInput, 'CustomerPagesPatch');

export const route = defineRoute({
  method: 'patch',
  path: '/settings/customer-pages',
  tags: ['settings'],
  summary:
    'Change the brand on the customer pages (merge of the top-level fields; apps and texts are replaced whole when given). Installation settings: owners only (spec 5.4)',
  auth: { scope: 'admin', roles: OWNERS },
  request: { ...body(UpdateCustomerPagesBody) },
  responses: { 200: json(CustomerPagesSchema, 'Updated settings') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await updateCustomerPages(actorContext(c), c.req.valid('json')), 200));

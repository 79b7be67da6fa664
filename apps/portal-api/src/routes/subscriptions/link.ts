import type { OpenAPIHono } from '@hono/zod-openapi';
import { portalSubscriptionLink } from '@svc/domain';
import { type AppEnv, defineRoute, IdParam, json } from '@svc/http';
import { portalContext } from '../portal-context.ts';
import { LinkSchema } from '../schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/subscriptions/{id}/link',
  tags: ['subscriptions'],
  summary: 'The subscription link of one of your subscriptions (another client’s id is 404)',
  auth: { scope: 'client' },
  request: { params: IdParam },
  responses: { 200: json(LinkSchema, 'The link'), 404: { description: 'No such subscription of yours' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await portalSubscriptionLink(portalContext(c), c.req.valid('param').id), 200));

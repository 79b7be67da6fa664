import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { getSubscriptionLink } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam, json } from '../../schemas.ts';

export const SubscriptionLinkSchema = z
  .object({ url: z.string().openapi({ format: 'uri', description: '{public_base_url}/sub/{token}' }) })
  .openapi('SubscriptionLink');

export const route = defineRoute({
  method: 'get',
  path: '/subscriptions/{id}/link',
  tags: ['subscriptions'],
  summary: 'The subscription link, of the form {public_base_url}/sub/{token} (owners and admins: the link is full proxy access)',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: { 200: json(SubscriptionLinkSchema, 'The link'), 404: { description: 'No such subscription' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getSubscriptionLink(actorContext(c), c.req.valid('param').id), 200));

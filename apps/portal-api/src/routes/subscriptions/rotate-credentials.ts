import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { portalRotateCredentials } from '@svc/domain';
import { type AppEnv, defineRoute, IdParam, json } from '@svc/http';
import { portalContext } from '../portal-context.ts';
import { PortalSubscriptionSchema } from '../schemas.ts';

const Rotated = PortalSubscriptionSchema.extend({ link: z.string().openapi({ format: 'uri' }) }).openapi('PortalRotatedSubscription');

export const route = defineRoute({
  method: 'post',
  path: '/subscriptions/{id}/rotate-credentials',
  tags: ['subscriptions'],
  summary: 'New proxy credentials and a new link for one of your subscriptions; the old link stops working at once',
  auth: { scope: 'client' },
  request: { params: IdParam },
  responses: { 200: json(Rotated, 'Rotated; the answer carries the new link'), 404: { description: 'No such subscription of yours' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await portalRotateCredentials(portalContext(c), c.req.valid('param').id), 200));

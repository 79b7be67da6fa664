import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { removeSubscriptionDevice } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam, problem } from '../../schemas.ts';

export const route = defineRoute({
  method: 'delete',
  path: '/subscriptions/{id}/devices/{deviceId}',
  tags: ['subscriptions'],
  summary: "Forget a registered device (its app's next fetch registers it again if there is room)",
  auth: { scope: 'admin', roles: WRITERS },
  request: {
    params: IdParam.extend({
      deviceId: z
        .string()
        .min(1)
        .max(64)
        .openapi({ param: { name: 'deviceId', in: 'path' } }),
    }),
  },
  responses: { 204: { description: 'Forgotten' }, 404: problem('No such subscription or device') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { id, deviceId } = c.req.valid('param');
    await removeSubscriptionDevice(actorContext(c), id, deviceId);
    return c.body(null, 204);
  });

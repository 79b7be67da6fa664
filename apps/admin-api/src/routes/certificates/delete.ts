import type { OpenAPIHono } from '@hono/zod-openapi';
import { deleteCertificate } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam, problem } from '../../schemas.ts';

export const route = defineRoute({
  method: 'delete',
  path: '/certificates/{id}',
  tags: ['certificates'],
  summary: 'Delete a certificate; refused while an inbound profile uses it',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: {
    204: { description: 'Deleted' },
    404: problem('No such certificate'),
    409: problem('Used by inbound profiles (blocked_by.inbound_profiles)'),
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    await deleteCertificate(actorContext(c), c.req.valid('param').id);
    return c.body(null, 204);
  });

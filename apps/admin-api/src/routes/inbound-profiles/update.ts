import type { OpenAPIHono } from '@hono/zod-openapi';
import { UpdateInboundProfileInput, updateInboundProfile } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, IdParam, json, problem } from '../../schemas.ts';
import { InboundProfileSchema } from './schemas.ts';

export const UpdateInboundProfileBody = openapi(UpdateInboundProfileInput, 'UpdateInboundProfile');

export const route = defineRoute({
  method: 'patch',
  path: '/inbound-profiles/{id}',
  tags: ['inbound-profiles'],
  summary: 'Update an inbound profile (merge; `stream` replaces the stream as a whole)',
  description:
    'A change to anything but the name moves the desired revision of every node with an inbound of this profile. The rules of creation apply to the merged result.',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam, ...body(UpdateInboundProfileBody) },
  responses: { 200: json(InboundProfileSchema, 'Updated'), 404: problem('No such profile'), 409: problem('Name taken') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await updateInboundProfile(actorContext(c), c.req.valid('param').id, c.req.valid('json')), 200));

import type { OpenAPIHono } from '@hono/zod-openapi';
import { UpdateInboundInput, updateInbound } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, IdParam, json, problem } from '../../schemas.ts';
import { InboundSchema } from './schemas.ts';

export const UpdateInboundBody = openapi(UpdateInboundInput, 'UpdateInbound');

export const route = defineRoute({
  method: 'patch',
  path: '/inbounds/{id}',
  tags: ['inbounds'],
  summary: 'Update an inbound (merge)',
  description:
    'A change of node, profile, port, listen or chain moves the desired revision of the old and the new node (and of the old and new chain hops when the chain changes); host only shapes client links.',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam, ...body(UpdateInboundBody) },
  responses: { 200: json(InboundSchema, 'Updated'), 404: problem('No such inbound'), 409: problem('The port is taken on the node') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await updateInbound(actorContext(c), c.req.valid('param').id, c.req.valid('json')), 200));

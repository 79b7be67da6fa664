import type { OpenAPIHono } from '@hono/zod-openapi';
import { CreateInboundInput, createInbound } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, json, problem } from '../../schemas.ts';
import { InboundSchema } from './schemas.ts';

export const CreateInboundBody = openapi(CreateInboundInput, 'CreateInbound');

export const route = defineRoute({
  method: 'post',
  path: '/inbounds',
  tags: ['inbounds'],
  summary: 'Bind an inbound profile to a port of a node',
  description: "Moves the node's desired revision (and the chain hops' when chain_id is set).",
  auth: { scope: 'admin', roles: WRITERS },
  request: body(CreateInboundBody),
  responses: {
    201: json(InboundSchema, 'Created'),
    409: problem('The port is taken on the node by an inbound or a chain hop (blocked_by names it)'),
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await createInbound(actorContext(c), c.req.valid('json')), 201));

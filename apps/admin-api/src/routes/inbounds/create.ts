import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { createInbound } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { body, json, problem } from '../../schemas.ts';
import { Host, InboundSchema, Listen, Port, RefId } from './schemas.ts';

export const CreateInboundBody = z
  .object({
    node_id: RefId,
    profile_id: RefId,
    port: Port,
    listen: Listen.nullable().optional(),
    host: Host.nullable().optional(),
    chain_id: RefId.nullable()
      .optional()
      .openapi({ description: "send this inbound's traffic through the chain; the inbound must live on the chain's first hop node" }),
  })
  .strict()
  .openapi('CreateInbound');

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

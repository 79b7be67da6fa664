import type { OpenAPIHono } from '@hono/zod-openapi';
import { CreateChainInput, createChain } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, json } from '../../schemas.ts';
import { ChainSchema } from './schemas.ts';

export const CreateChainBody = openapi(CreateChainInput, 'CreateChain');

export const route = defineRoute({
  method: 'post',
  path: '/chains',
  tags: ['chains'],
  summary: 'Create a chain of 2+ hops; bumps every hop node',
  auth: { scope: 'admin', roles: WRITERS },
  request: body(CreateChainBody),
  responses: {
    201: json(ChainSchema, 'Created'),
    409: { description: "Name taken, or a hop's (node, port) is taken by an inbound or another chain (blocked_by)" },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await createChain(actorContext(c), c.req.valid('json')), 201));

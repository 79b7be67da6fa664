import type { OpenAPIHono } from '@hono/zod-openapi';
import { UpdateChainInput, updateChain } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, IdParam, json } from '../../schemas.ts';
import { ChainSchema } from './schemas.ts';

export const UpdateChainBody = openapi(UpdateChainInput, 'UpdateChain');

export const route = defineRoute({
  method: 'patch',
  path: '/chains/{id}',
  tags: ['chains'],
  summary: 'Update a chain (merge; hops replaces the list and bumps every old and new hop node)',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam, ...body(UpdateChainBody) },
  responses: {
    200: json(ChainSchema, 'Updated'),
    404: { description: 'No such chain' },
    409: {
      description:
        "Name taken; a hop's (node, port) is taken; or the first hop moves to another node while inbounds route through the chain (blocked_by)",
    },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await updateChain(actorContext(c), c.req.valid('param').id, c.req.valid('json')), 200));

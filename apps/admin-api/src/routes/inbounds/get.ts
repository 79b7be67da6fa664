import type { OpenAPIHono } from '@hono/zod-openapi';
import { getInbound } from '@svc/domain';
import { type AppEnv, defineRoute, READERS } from '@svc/http';
import { IdParam, json, problem } from '../../schemas.ts';
import { InboundSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/inbounds/{id}',
  tags: ['inbounds'],
  summary: 'One inbound',
  auth: { scope: 'admin', roles: READERS },
  request: { params: IdParam },
  responses: { 200: json(InboundSchema, 'The inbound'), 404: problem('No such inbound') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getInbound(c.get('deps'), c.req.valid('param').id), 200));

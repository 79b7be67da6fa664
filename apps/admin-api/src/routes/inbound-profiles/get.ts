import type { OpenAPIHono } from '@hono/zod-openapi';
import { getInboundProfile } from '@svc/domain';
import { type AppEnv, defineRoute, READERS } from '@svc/http';
import { IdParam, json, problem } from '../../schemas.ts';
import { InboundProfileSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/inbound-profiles/{id}',
  tags: ['inbound-profiles'],
  summary: 'One inbound profile (the REALITY private key is never returned)',
  auth: { scope: 'admin', roles: READERS },
  request: { params: IdParam },
  responses: { 200: json(InboundProfileSchema, 'The profile'), 404: problem('No such profile') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getInboundProfile(c.get('deps'), c.req.valid('param').id), 200));

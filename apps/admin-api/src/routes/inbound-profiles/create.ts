import type { OpenAPIHono } from '@hono/zod-openapi';
import { CreateInboundProfileInput, createInboundProfile } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, json, problem } from '../../schemas.ts';
import { InboundProfileSchema } from './schemas.ts';

export const CreateInboundProfileBody = openapi(CreateInboundProfileInput, 'CreateInboundProfile');

export const route = defineRoute({
  method: 'post',
  path: '/inbound-profiles',
  tags: ['inbound-profiles'],
  summary: 'Create an inbound profile (protocol, transport, security); REALITY keys are generated when not given',
  auth: { scope: 'admin', roles: WRITERS },
  request: body(CreateInboundProfileBody),
  responses: { 201: json(InboundProfileSchema, 'Created'), 409: problem('Name taken') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await createInboundProfile(actorContext(c), c.req.valid('json')), 201));

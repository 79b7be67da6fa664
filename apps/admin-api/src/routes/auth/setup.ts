import type { OpenAPIHono } from '@hono/zod-openapi';
import { assertBootstrapMode, completeSetup, SetupInput } from '@svc/domain';
import { type AppEnv, defineRoute, openapi, requestMeta } from '@svc/http';
import { AdminSchema, body, json } from '../../schemas.ts';

export const SetupBody = openapi(SetupInput, 'SetupRequest');

export const route = defineRoute({
  method: 'post',
  path: '/setup',
  tags: ['auth'],
  summary: 'Create the first owner with the setup token from the process log (bootstrap mode only; 404 afterwards)',
  auth: null,
  gate: assertBootstrapMode,
  request: body(SetupBody),
  responses: {
    201: json(AdminSchema, 'The owner was created; bootstrap mode has ended'),
    404: { description: 'Bootstrap has ended' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const admin = await completeSetup(c.get('deps'), c.req.valid('json'), requestMeta(c));
    return c.json(admin, 201);
  });

import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { portalMethods } from '@svc/domain';
import { type AppEnv, defineRoute, json } from '@svc/http';

export const PortalAuthMethodsSchema = z
  .object({
    magic_link: z.literal(true).openapi({ description: 'always on (spec 5.7)' }),
    password: z.boolean(),
    oauth: z.array(z.string()).openapi({ description: 'configured providers (portal_auth.oauth)' }),
    registration: z.enum(['closed', 'application', 'open']),
  })
  .openapi('PortalAuthMethods');

export const route = defineRoute({
  method: 'get',
  path: '/auth/methods',
  tags: ['auth'],
  summary: 'Enabled sign-in methods and the registration mode (the sign-in and registration forms are built from it)',
  auth: null,
  responses: { 200: json(PortalAuthMethodsSchema, 'Methods') },
});

export const register = (app: OpenAPIHono<AppEnv>) => app.openapi(route, async (c) => c.json(portalMethods(c.get('deps').config), 200));

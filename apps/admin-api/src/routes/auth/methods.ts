import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { adminMethods, setupRequired } from '@svc/domain';
import { type AppEnv, defineRoute } from '@svc/http';
import { json } from '../../schemas.ts';

export const AuthMethodsSchema = z
  .object({
    password: z.boolean(),
    oauth: z.array(z.string()),
    setup_required: z.boolean(),
  })
  .openapi('AdminAuthMethods');
export type AuthMethods = z.infer<typeof AuthMethodsSchema>;

export const route = defineRoute({
  method: 'get',
  path: '/auth/methods',
  tags: ['auth'],
  summary: 'Enabled sign-in methods and whether setup is required',
  auth: null,
  responses: { 200: json(AuthMethodsSchema, 'Methods') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const deps = c.get('deps');
    return c.json({ ...adminMethods(deps.config), setup_required: await setupRequired(deps) }, 200);
  });

import type { OpenAPIHono } from '@hono/zod-openapi';
import { assertAdminMethodEnabled, loginAdminWithPassword, PasswordLoginInput } from '@svc/domain';
import { type AppEnv, defineRoute, openapi, requestMeta } from '@svc/http';
import { body, json, TokenPairSchema } from '../../schemas.ts';

export const LoginBody = openapi(PasswordLoginInput, 'LoginRequest');

export const route = defineRoute({
  method: 'post',
  path: '/auth/login',
  tags: ['auth'],
  summary: 'Sign in with email and password (404 when auth.password_login is off)',
  auth: null,
  gate: (deps) => assertAdminMethodEnabled(deps.config, 'password'),
  request: body(LoginBody),
  responses: {
    200: json(TokenPairSchema, 'Token pair'),
    401: { description: 'Wrong email or password' },
    404: { description: 'Password sign-in is switched off' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const pair = await loginAdminWithPassword(c.get('deps'), c.req.valid('json'), requestMeta(c));
    return c.json(pair, 200);
  });

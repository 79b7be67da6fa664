import type { OpenAPIHono } from '@hono/zod-openapi';
import { assertAdminMethodEnabled, loginAdminWithPassword, PasswordLoginInput } from '@svc/domain';
import { type AppEnv, answerTokens, defineRoute, openapi, requestMeta, SessionModeQuery, SessionTokensSchema } from '@svc/http';
import { body, json } from '../../schemas.ts';

export const LoginBody = openapi(PasswordLoginInput, 'LoginRequest');

export const route = defineRoute({
  method: 'post',
  path: '/auth/login',
  tags: ['auth'],
  summary: 'Sign in with email and password (404 when auth.password_login is off)',
  auth: null,
  gate: (deps) => assertAdminMethodEnabled(deps.config, 'password'),
  request: { ...body(LoginBody), query: SessionModeQuery },
  responses: {
    200: json(SessionTokensSchema, 'Token pair (with ?session=cookie: the refresh token in its cookie)'),
    401: { description: 'Wrong email or password' },
    404: { description: 'Password sign-in is switched off' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const pair = await loginAdminWithPassword(c.get('deps'), c.req.valid('json'), requestMeta(c));
    return c.json(answerTokens(c, 'admin', pair), 200);
  });

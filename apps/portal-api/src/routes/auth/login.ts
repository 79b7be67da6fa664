import type { OpenAPIHono } from '@hono/zod-openapi';
import { assertPortalPasswordEnabled, loginClientWithPassword, PasswordLoginInput } from '@svc/domain';
import { type AppEnv, answerTokens, body, defineRoute, json, openapi, requestMeta, SessionModeQuery, SessionTokensSchema } from '@svc/http';

export const PortalLoginBody = openapi(PasswordLoginInput, 'PortalLoginRequest');

export const route = defineRoute({
  method: 'post',
  path: '/auth/login',
  tags: ['auth'],
  summary: 'Sign in with email and password (404 when portal_auth.password_login is off)',
  auth: null,
  gate: (deps) => assertPortalPasswordEnabled(deps.config),
  request: { ...body(PortalLoginBody), query: SessionModeQuery },
  responses: {
    200: json(SessionTokensSchema, 'Token pair, scope client (with ?session=cookie: the refresh token in its cookie)'),
    401: { description: 'Wrong email or password' },
    403: { description: 'Right password, but the client may not sign in: email unconfirmed, pending, rejected or disabled' },
    404: { description: 'Password sign-in is switched off' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const pair = await loginClientWithPassword(c.get('deps'), c.req.valid('json'), requestMeta(c));
    return c.json(answerTokens(c, 'client', pair), 200);
  });

import type { OpenAPIHono } from '@hono/zod-openapi';
import { MagicLinkCallbackInput, redeemMagicLink, registrationBrowserCookie } from '@svc/domain';
import {
  type AppEnv,
  answerTokens,
  body,
  cookieValues,
  defineRoute,
  json,
  openapi,
  requestMeta,
  SessionModeQuery,
  SessionTokensSchema,
  setBindingCookie,
} from '@svc/http';

export const CallbackBody = openapi(MagicLinkCallbackInput, 'MagicLinkCallback');

export const route = defineRoute({
  method: 'post',
  path: '/auth/callback',
  tags: ['auth'],
  summary: 'Exchange a magic-link token for a token pair; its first use confirms the email',
  description:
    "A password registration's confirmation link sets the password chosen at registration only when the browser that registered redeems it (its registration cookie, cleared here); anywhere else it confirms and signs in without a password.",
  auth: null,
  request: { ...body(CallbackBody), query: SessionModeQuery },
  responses: {
    200: json(SessionTokensSchema, 'Token pair, scope client (with ?session=cookie: the refresh token in its cookie)'),
    401: { description: 'Unknown, used or expired link' },
    403: { description: 'Email confirmed, but the client may not sign in (pending approval, rejected, disabled)' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const deps = c.get('deps');
    const cookie = registrationBrowserCookie(deps.config);
    const keys = cookieValues(c, cookie.name);
    if (keys.length > 0) setBindingCookie(c, cookie, '');
    const pair = await redeemMagicLink(deps, c.req.valid('json'), requestMeta(c), keys);
    return c.json(answerTokens(c, 'client', pair), 200);
  });

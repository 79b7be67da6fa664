import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { RefreshInput, refreshSession, UnauthenticatedError, ValidationError } from '@svc/domain';
import {
  type AppEnv,
  answerTokens,
  body,
  clearRefreshCookie,
  defineRoute,
  json,
  refreshTokenFromCookie,
  requestMeta,
  SessionModeQuery,
  SessionTokensSchema,
  wantsCookieSession,
} from '@svc/http';

export const PortalRefreshBody = z
  .object({
    refresh_token: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .openapi({ description: 'Required, except with ?session=cookie (then send {} and the cookie is read)' }),
  })
  .strict()
  .openapi('PortalRefreshRequest');

export const route = defineRoute({
  method: 'post',
  path: '/auth/refresh',
  tags: ['auth'],
  summary: 'Rotate the refresh token; a used token presented again revokes every session of the client',
  auth: null,
  // The refresh token in the body, or (?session=cookie, the portal web app) in the refresh cookie.
  security: [{}, { refreshCookie: [] }],
  request: { ...body(PortalRefreshBody), query: SessionModeQuery },
  responses: {
    200: json(SessionTokensSchema, 'New token pair (with ?session=cookie: the new refresh token in its cookie)'),
    401: { description: 'Unknown, used, expired or revoked (or an admin token)' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const cookieMode = wantsCookieSession(c);
    const token = c.req.valid('json').refresh_token ?? (cookieMode ? refreshTokenFromCookie(c, 'client') : undefined);
    if (!token) {
      if (cookieMode) throw new UnauthenticatedError('no session cookie: sign in');
      throw new ValidationError('the request body is invalid', { refresh_token: 'required' });
    }
    try {
      const pair = await refreshSession(c.get('deps'), 'client', RefreshInput.parse({ refresh_token: token }), requestMeta(c));
      return c.json(answerTokens(c, 'client', pair), 200);
    } catch (err) {
      // A cookie that no longer works is dropped, so the browser stops presenting it.
      if (cookieMode && err instanceof UnauthenticatedError) clearRefreshCookie(c, 'client');
      throw err;
    }
  });

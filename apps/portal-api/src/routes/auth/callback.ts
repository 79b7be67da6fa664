import type { OpenAPIHono } from '@hono/zod-openapi';
import { MagicLinkCallbackInput, redeemMagicLink } from '@svc/domain';
import { type AppEnv, body, defineRoute, json, openapi, requestMeta, TokenPairSchema } from '@svc/http';

export const CallbackBody = openapi(MagicLinkCallbackInput, 'MagicLinkCallback');

export const route = defineRoute({
  method: 'post',
  path: '/auth/callback',
  tags: ['auth'],
  summary: 'Exchange a magic-link token for a token pair; its first use confirms the email',
  auth: null,
  request: body(CallbackBody),
  responses: {
    200: json(TokenPairSchema, 'Token pair (scope client)'),
    401: { description: 'Unknown, used or expired link' },
    403: { description: 'Email confirmed, but the client may not sign in (pending approval, rejected, disabled)' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await redeemMagicLink(c.get('deps'), c.req.valid('json'), requestMeta(c)), 200));

import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { MAGIC_LINK_TTL_MS, MagicLinkRequestInput, requestMagicLink } from '@svc/domain';
import { formatDuration } from '@svc/format';
import { type AppEnv, body, defineRoute, json, openapi, requestMeta } from '@svc/http';

export const MagicLinkBody = openapi(MagicLinkRequestInput, 'MagicLinkRequest');
const Accepted = z.object({ status: z.literal('sent_if_known'), detail: z.string() }).openapi('MagicLinkAccepted');

export const route = defineRoute({
  method: 'post',
  path: '/auth/magic-link',
  tags: ['auth'],
  summary: `Mail a one-time sign-in link (${formatDuration(MAGIC_LINK_TTL_MS)}); the same answer whether or not the email is known`,
  description:
    'The link signs in, confirms the email on first use, and is how access is recovered (sign in by link, then set a new password). Always on.',
  auth: null,
  request: body(MagicLinkBody),
  responses: { 202: json(Accepted, 'Accepted (a link is mailed if a client with this email can use one)') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    await requestMagicLink(c.get('deps'), c.req.valid('json'), requestMeta(c));
    return c.json(
      {
        status: 'sent_if_known' as const,
        detail: `if a customer with this email exists, a sign-in link is on its way; it works once, for ${formatDuration(MAGIC_LINK_TTL_MS)}`,
      },
      202,
    );
  });

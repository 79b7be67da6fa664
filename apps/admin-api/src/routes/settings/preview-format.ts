import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { PreviewSubFormatInput, previewSubFormat, SUB_FORMATS } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, READERS } from '@svc/http';
import { body, json } from '../../schemas.ts';

export const PreviewBody = openapi(PreviewSubFormatInput, 'SubscriptionFormatPreviewRequest');
export const PreviewSchema = z
  .object({
    format: z.enum(SUB_FORMATS),
    rule_index: z.number().int().nullable().openapi({ description: 'the rule that matched (0-based), null when none did' }),
    reason: z.enum(['rule', 'browser', 'fallback']).openapi({
      description: 'rule: a rule matched; browser: the html page (Accept text/html, a Mozilla/ User-Agent); fallback: the base64 list',
    }),
  })
  .openapi('SubscriptionFormatPreview');

export const route = defineRoute({
  method: 'post',
  path: '/settings/subscription-link/preview',
  tags: ['settings'],
  summary: 'Which format GET /sub/{token} answers a User-Agent with, under the saved rules or rules being edited (nothing is saved)',
  auth: { scope: 'admin', roles: READERS },
  request: { ...body(PreviewBody) },
  responses: { 200: json(PreviewSchema, 'The format and why') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await previewSubFormat(actorContext(c), c.req.valid('json')), 200));

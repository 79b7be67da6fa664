import type { OpenAPIHono } from '@hono/zod-openapi';
import { updateSubLinkSettings } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { body, json } from '../../schemas.ts';
import { SubLinkSettingsPatchSchema, SubLinkSettingsSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'patch',
  path: '/settings/subscription-link',
  tags: ['settings'],
  summary: 'Change what GET /sub/{token} answers (merge; format_rules replaces the whole list)',
  auth: { scope: 'admin', roles: WRITERS },
  request: { ...body(SubLinkSettingsPatchSchema) },
  responses: { 200: json(SubLinkSettingsSchema, 'Updated settings') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await updateSubLinkSettings(actorContext(c), c.req.valid('json')), 200));

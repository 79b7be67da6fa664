import type { OpenAPIHono } from '@hono/zod-openapi';
import { UpdateSubLinkSettingsInput, updateSubLinkSettings } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, OWNERS, openapi } from '@svc/http';
import { body, json } from '../../schemas.ts';
import { SubLinkSettingsSchema } from './schemas.ts';

export const UpdateSubLinkSettingsBody = openapi(UpdateSubLinkSettingsInput, 'SubscriptionLinkSettingsPatch');

export const route = defineRoute({
  method: 'patch',
  path: '/settings/subscription-link',
  tags: ['settings'],
  summary:
    'Change what GET /sub/{token} answers (merge; format_rules replaces the whole list). Installation settings: owners only (spec 5.4)',
  auth: { scope: 'admin', roles: OWNERS },
  request: { ...body(UpdateSubLinkSettingsBody) },
  responses: { 200: json(SubLinkSettingsSchema, 'Updated settings') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await updateSubLinkSettings(actorContext(c), c.req.valid('json')), 200));

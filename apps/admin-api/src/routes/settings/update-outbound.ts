import type { OpenAPIHono } from '@hono/zod-openapi';
import { UpdateOutboundSettingsInput, updateOutboundSettings } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, OWNERS, openapi } from '@svc/http';
import { body, json } from '../../schemas.ts';
import { OutboundSettingsSchema } from './schemas.ts';

export const UpdateOutboundSettingsBody = openapi(UpdateOutboundSettingsInput, 'OutboundSettingsPatch');

export const route = defineRoute({
  method: 'patch',
  path: '/settings/outbound',
  tags: ['settings'],
  summary:
    'Allow or refuse loopback and private networks as destinations of webhooks, ACME, DNS, OAuth and payment APIs. Installation settings: owners only (spec 5.4); 409 while the configuration sets it',
  auth: { scope: 'admin', roles: OWNERS },
  request: { ...body(UpdateOutboundSettingsBody) },
  responses: { 200: json(OutboundSettingsSchema, 'The setting in force') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await updateOutboundSettings(actorContext(c), c.req.valid('json')), 200));

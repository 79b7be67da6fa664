import type { OpenAPIHono } from '@hono/zod-openapi';
import { getOutboundSettings } from '@svc/domain';
import { type AppEnv, defineRoute, READERS } from '@svc/http';
import { json } from '../../schemas.ts';
import { OutboundSettingsSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/settings/outbound',
  tags: ['settings'],
  summary: 'Where the server may connect on an admin’s word: whether loopback and private networks are allowed (docs/threat-model.md)',
  auth: { scope: 'admin', roles: READERS },
  request: {},
  responses: { 200: json(OutboundSettingsSchema, 'The setting in force, and whether the configuration sets it') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getOutboundSettings(c.get('deps')), 200));

import type { OpenAPIHono } from '@hono/zod-openapi';
import { getSubLinkSettings } from '@svc/domain';
import { type AppEnv, defineRoute, READERS } from '@svc/http';
import { json } from '../../schemas.ts';
import { SubLinkSettingsSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/settings/subscription-link',
  tags: ['settings'],
  summary: 'What GET /sub/{token} answers: format rules by User-Agent, title, refresh interval, links',
  auth: { scope: 'admin', roles: READERS },
  request: {},
  responses: { 200: json(SubLinkSettingsSchema, 'Current settings (defaults until first changed)') },
});

export const register = (app: OpenAPIHono<AppEnv>) => app.openapi(route, async (c) => c.json(await getSubLinkSettings(c.get('deps')), 200));

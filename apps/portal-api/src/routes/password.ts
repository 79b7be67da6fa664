import type { OpenAPIHono } from '@hono/zod-openapi';
import { assertPortalPasswordEnabled, SetPasswordInput, setClientPassword } from '@svc/domain';
import { type AppEnv, body, defineRoute, openapi } from '@svc/http';
import { portalContext } from './portal-context.ts';

export const SetPasswordBody = openapi(SetPasswordInput, 'SetPasswordRequest');

export const route = defineRoute({
  method: 'put',
  path: '/me/password',
  tags: ['account'],
  summary: 'Set or change your password (access recovery: sign in by magic link, then set a new one); other sessions are signed out',
  auth: { scope: 'client' },
  gate: (deps) => assertPortalPasswordEnabled(deps.config),
  request: body(SetPasswordBody),
  responses: { 204: { description: 'Password set' }, 404: { description: 'Portal password sign-in is switched off' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    await setClientPassword(portalContext(c), c.get('auth').sid, c.req.valid('json'));
    return c.body(null, 204);
  });

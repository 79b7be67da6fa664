import type { OpenAPIHono } from '@hono/zod-openapi';
import { assertPortalPasswordEnabled, SetPasswordInput, setClientPassword } from '@svc/domain';
import { type AppEnv, body, defineRoute, openapi } from '@svc/http';
import { portalContext } from './portal-context.ts';

export const SetPasswordBody = openapi(SetPasswordInput, 'SetPasswordRequest');

export const route = defineRoute({
  method: 'put',
  path: '/me/password',
  tags: ['account'],
  summary: 'Set or change your password; other sessions are signed out',
  description:
    'Give `current_password` when you have a password. Without it the change is accepted only within 10 minutes of signing in by magic link or OAuth (access recovery: a forgotten password is replaced by signing in by link, then setting a new one; a refreshed session does not count). A wrong current password counts toward the sign-in budgets (429 when spent).',
  auth: { scope: 'client' },
  gate: (deps) => assertPortalPasswordEnabled(deps.config),
  request: body(SetPasswordBody),
  responses: {
    204: { description: 'Password set' },
    403: {
      description:
        'The current password is wrong, or it is missing and this session was not made by a magic link or OAuth within 10 minutes (`reason`: current_password_wrong, current_password_required; `errors.current_password` says which)',
    },
    404: { description: 'Portal password sign-in is switched off' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    await setClientPassword(portalContext(c), c.get('auth').sid, c.req.valid('json'));
    return c.body(null, 204);
  });

import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { assertPasswordRegistrationOpen, RegisterInput, registerWithPassword, registrationBrowserCookie } from '@svc/domain';
import { type AppEnv, body, defineRoute, json, openapi, requestMeta, setBindingCookie } from '@svc/http';

export const RegisterBody = openapi(RegisterInput, 'RegisterRequest');

export const RegistrationSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    status: z.enum(['pending', 'active']).openapi({ description: 'pending in mode application (an admin approves), active in mode open' }),
    email_verified: z.literal(false),
    next: z.string().openapi({ description: 'what happens next, for the person' }),
  })
  .openapi('Registration');

export const route = defineRoute({
  method: 'post',
  path: '/auth/register',
  tags: ['auth'],
  summary: 'Register with email and password; a confirmation link is mailed (404 when registration is closed)',
  description:
    'Mode application: the client is pending until an admin approves; mode open: active once the email is confirmed. The link from the mail confirms the email (POST /auth/callback); unconfirmed registrations are deleted after 24 hours.',
  auth: null,
  gate: (deps) => assertPasswordRegistrationOpen(deps.config),
  request: body(RegisterBody),
  responses: {
    201: json(
      RegistrationSchema,
      'Registered; confirm the email. Set-Cookie binds the registration to this browser (HttpOnly, SameSite=Lax, the callback path only): the confirmation link sets the chosen password only when this browser redeems it',
    ),
    404: { description: 'Registration is closed (or portal password sign-in is off)' },
    409: { description: 'A client with this email exists (whatever its status, rejected included)' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const deps = c.get('deps');
    const { answer, browserKey } = await registerWithPassword(deps, c.req.valid('json'), requestMeta(c));
    setBindingCookie(c, registrationBrowserCookie(deps.config), browserKey);
    return c.json(answer, 201);
  });

import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { updateClient } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { body, Email, IdParam, json, Password } from '../../schemas.ts';
import { ClientSchema, Note } from './schemas.ts';

export const UpdateClientBody = z
  .object({
    status: z
      .enum(['active', 'disabled'])
      .optional()
      .openapi({ description: 'ban (active -> disabled) or unban (disabled -> active); pending clients are approved or rejected' }),
    email: Email.optional().openapi({ description: 'the new address counts as verified (the admin vouches)' }),
    password: Password.nullable()
      .optional()
      .openapi({ description: "null removes password sign-in; any change ends the client's sessions" }),
    note: Note.optional(),
  })
  .strict()
  .openapi('UpdateClient');

export const route = defineRoute({
  method: 'patch',
  path: '/clients/{id}',
  tags: ['clients'],
  summary: 'Update a client (merge); status bans or unbans',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam, ...body(UpdateClientBody) },
  responses: {
    200: json(ClientSchema, 'Updated'),
    404: { description: 'No such client' },
    409: { description: 'Email taken, or a status change other than ban/unban' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await updateClient(actorContext(c), c.req.valid('param').id, c.req.valid('json')), 200));

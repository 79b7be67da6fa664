import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { createAcmeAccount, LETS_ENCRYPT_PRODUCTION } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { body, Email, json, problem } from '../../schemas.ts';
import { AcmeAccountSchema } from './schemas.ts';

export const CreateAcmeAccountBody = z
  .object({
    email: Email,
    directory_url: z
      .string()
      .trim()
      .max(2048)
      .url()
      .refine((u) => u.startsWith('https://'), 'must be an https URL')
      .optional()
      .openapi({ description: `ACME directory; default Let's Encrypt production (${LETS_ENCRYPT_PRODUCTION})` }),
  })
  .strict()
  .openapi('CreateAcmeAccount');

export const route = defineRoute({
  method: 'post',
  path: '/acme-accounts',
  tags: ['acme-accounts'],
  summary: 'Create an ACME account (registered with the server when first used)',
  auth: { scope: 'admin', roles: WRITERS },
  request: body(CreateAcmeAccountBody),
  responses: { 201: json(AcmeAccountSchema, 'Created'), 409: problem('An account for this email exists at this directory') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await createAcmeAccount(actorContext(c), c.req.valid('json')), 201));

import type { OpenAPIHono } from '@hono/zod-openapi';
import { CreateAcmeAccountInput, createAcmeAccount } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, json, problem } from '../../schemas.ts';
import { AcmeAccountSchema } from './schemas.ts';

export const CreateAcmeAccountBody = openapi(CreateAcmeAccountInput, 'CreateAcmeAccount');

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

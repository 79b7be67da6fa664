import type { OpenAPIHono } from '@hono/zod-openapi';
import { CreateCertificateInput, createCertificate } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, json } from '../../schemas.ts';
import { CertificateSchema } from './schemas.ts';

export const CreateCertificateBody = openapi(CreateCertificateInput, 'CreateCertificate');

export const route = defineRoute({
  method: 'post',
  path: '/certificates',
  tags: ['certificates'],
  summary: 'Upload a certificate and its key, or order one from an ACME CA (kind acme: issued by the worker over DNS-01)',
  auth: { scope: 'admin', roles: WRITERS },
  request: body(CreateCertificateBody),
  responses: { 201: json(CertificateSchema, 'Created') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await createCertificate(actorContext(c), c.req.valid('json')), 201));

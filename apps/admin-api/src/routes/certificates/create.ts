import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { createCertificate } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { body, json } from '../../schemas.ts';
import { CertificateKind, CertificateName, CertificateSchema, CertPem, Domains, KeyPem } from './schemas.ts';

export const CreateCertificateBody = z
  .object({
    name: CertificateName.nullable().optional(),
    kind: CertificateKind.openapi({
      description: 'uploaded: cert_pem and key_pem required. acme: refused for now (issuance comes in a later version)',
    }),
    cert_pem: CertPem.optional(),
    key_pem: KeyPem.optional(),
    domains: Domains.optional(),
  })
  .strict()
  .openapi('CreateCertificate');

export const route = defineRoute({
  method: 'post',
  path: '/certificates',
  tags: ['certificates'],
  summary: 'Upload a certificate and its key (validity, issuer and names parsed from the PEM)',
  auth: { scope: 'admin', roles: WRITERS },
  request: body(CreateCertificateBody),
  responses: { 201: json(CertificateSchema, 'Created') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await createCertificate(actorContext(c), c.req.valid('json')), 201));

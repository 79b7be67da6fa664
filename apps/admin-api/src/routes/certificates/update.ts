import type { OpenAPIHono } from '@hono/zod-openapi';
import { UpdateCertificateInput, updateCertificate } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, IdParam, json, problem } from '../../schemas.ts';
import { CertificateSchema } from './schemas.ts';

export const UpdateCertificateBody = openapi(UpdateCertificateInput, 'UpdateCertificate');

export const route = defineRoute({
  method: 'patch',
  path: '/certificates/{id}',
  tags: ['certificates'],
  summary: 'Update a certificate (merge); cert_pem + key_pem together replace the material',
  description: 'New material moves the desired revision of every node serving TLS with this certificate.',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam, ...body(UpdateCertificateBody) },
  responses: {
    200: json(CertificateSchema, 'Updated'),
    404: problem('No such certificate'),
    409: problem('New material for an ACME certificate (its CA issues it: POST /certificates/{id}/renew)'),
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await updateCertificate(actorContext(c), c.req.valid('param').id, c.req.valid('json')), 200));

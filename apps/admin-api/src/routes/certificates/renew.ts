import type { OpenAPIHono } from '@hono/zod-openapi';
import { renewCertificate } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam, json, problem } from '../../schemas.ts';
import { CertificateSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'post',
  path: '/certificates/{id}/renew',
  tags: ['certificates'],
  summary: 'Forced renewal of an ACME certificate (or a retry of a failed issuance) by the worker',
  description:
    'Answers at once with the certificate as it is; the worker orders the new material (status, last_error and next_attempt_at tell how it went). The old material serves until the new one comes; a failed renewal leaves it serving.',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: {
    202: json(CertificateSchema, 'Renewal requested'),
    404: problem('No such certificate'),
    409: problem('An uploaded certificate (renewed by PATCH with new material)'),
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await renewCertificate(actorContext(c), c.req.valid('param').id), 202));

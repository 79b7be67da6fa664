import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { listCertificates } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, pageOf, pageQuery, READERS, signedPage } from '@svc/http';
import { json } from '../../schemas.ts';
import { CertificateKind, CertificateSchema } from './schemas.ts';

export const CertificatePage = pageOf(CertificateSchema, 'CertificatePage');

export const route = defineRoute({
  method: 'get',
  path: '/certificates',
  tags: ['certificates'],
  summary: 'List certificates, oldest first',
  auth: { scope: 'admin', roles: READERS },
  request: {
    query: z.object({
      ...pageQuery,
      kind: CertificateKind.optional(),
      status: z.string().max(32).optional(),
      expiring_within_days: z.coerce
        .number()
        .int()
        .min(1)
        .max(3650)
        .optional()
        .openapi({ description: 'not expired, and expiring within this many days (the dashboard counts 30)' }),
      failing: z
        .enum(['true', 'false'])
        .transform((v) => v === 'true')
        .optional()
        .openapi({ description: 'true: the last issuance or renewal failed (last_error is set)' }),
    }),
  },
  responses: { 200: json(CertificatePage, 'A page of certificates') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(signedPage(c, await listCertificates(actorContext(c), c.req.valid('query'))), 200));

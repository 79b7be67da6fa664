import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { ClientBulkInput, queueClientBulk } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, json } from '../../schemas.ts';
import { BulkJobSchema } from '../bulk-jobs/schemas.ts';
import { ClientSchema } from './schemas.ts';

export const ClientBulkBody = openapi(ClientBulkInput, 'ClientBulk');

export const route = defineRoute({
  method: 'post',
  path: '/clients/bulk',
  tags: ['clients'],
  summary: 'One action over many clients, by ids or by the list filter: dry run, or a job',
  description:
    "Approve, reject, disable, enable or delete, over `ids` or every client a `filter` (the list route's status, q) selects now (at most 200,000). A client whose status does not allow the move, or that still has subscriptions or payments (delete), is skipped and counted. `dry_run: true` answers how many and a sample; otherwise 202 with the job (GET /bulk-jobs/{id}; `bulk_job` on the event stream).",
  auth: { scope: 'admin', roles: WRITERS },
  request: body(ClientBulkBody),
  responses: {
    200: json(
      z.object({ dry_run: z.literal(true), count: z.number().int(), sample: z.array(ClientSchema) }).openapi('ClientBulkDryRun'),
      'Dry run: how many the job would take, and the first few',
    ),
    202: json(BulkJobSchema, 'The job, queued'),
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const result = await queueClientBulk(actorContext(c), c.req.valid('json'));
    if ('dry_run' in result) return c.json(result, 200);
    c.header('Location', `/api/v1/bulk-jobs/${result.id}`);
    return c.json(result, 202);
  });

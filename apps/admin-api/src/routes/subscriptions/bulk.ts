import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { queueSubscriptionBulk, SubscriptionBulkInput } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, json } from '../../schemas.ts';
import { BulkJobSchema } from '../bulk-jobs/schemas.ts';
import { SubscriptionSchema } from './schemas.ts';

export const SubscriptionBulkBody = openapi(SubscriptionBulkInput, 'SubscriptionBulk');

export const route = defineRoute({
  method: 'post',
  path: '/subscriptions/bulk',
  tags: ['subscriptions'],
  summary: 'One action over many subscriptions, by ids or by the list filter: dry run, or a job',
  description:
    "Extend expiry, add or set traffic, reset usage, set status, set access groups, rotate credentials or delete, over `ids` (at most 20,000) or every subscription a `filter` (the list route's status, client_id, q) selects now (at most 200,000). `dry_run: true` answers how many and a sample, changing nothing. Otherwise 202 with the job: it runs in the worker a chunk per transaction, audited per subscription, its progress on the event stream (`bulk_job`) and at GET /bulk-jobs/{id}; the nodes it reaches get one new revision for the whole job, when it ends; a job resumed after a crash applies nothing twice.",
  auth: { scope: 'admin', roles: WRITERS },
  request: body(SubscriptionBulkBody),
  responses: {
    200: json(
      z
        .object({ dry_run: z.literal(true), count: z.number().int(), sample: z.array(SubscriptionSchema) })
        .openapi('SubscriptionBulkDryRun'),
      'Dry run: how many the job would take, and the first few',
    ),
    202: json(BulkJobSchema, 'The job, queued'),
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const result = await queueSubscriptionBulk(actorContext(c), c.req.valid('json'));
    if ('dry_run' in result) return c.json(result, 200);
    c.header('Location', `/api/v1/bulk-jobs/${result.id}`);
    return c.json(result, 202);
  });

import { z } from '@hono/zod-openapi';

const Timestamp = z.string().openapi({ format: 'date-time' });

export const BulkJobSchema = z
  .object({
    id: z.string(),
    target: z.enum(['subscriptions', 'clients']),
    action: z.record(z.string(), z.unknown()).openapi({ description: 'the action as it was asked: {type, ...}' }),
    status: z.enum(['queued', 'running', 'done', 'failed']),
    total: z.number().int().openapi({ description: 'items the job took when it was made' }),
    done: z.number().int().openapi({ description: 'items done so far (applied or skipped)' }),
    skipped: z.number().int().openapi({
      description:
        'of done, those the action could not apply: deleted meanwhile, a client move its status refuses, a client with subscriptions or payments to delete',
    }),
    error: z.string().nullable(),
    created_by: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
    finished_at: Timestamp.nullable(),
  })
  .openapi('BulkJob');

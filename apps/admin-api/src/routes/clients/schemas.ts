import { z } from '@hono/zod-openapi';

export const ClientStatus = z.enum(['pending', 'active', 'rejected', 'disabled']);

export const ClientSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    status: ClientStatus,
    email_verified_at: z.string().nullable().openapi({ format: 'date-time' }),
    has_password: z.boolean(),
    note: z.string().nullable(),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Client');

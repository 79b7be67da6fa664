import { z } from '@hono/zod-openapi';
import { AdminRole } from '@svc/domain';

export const AdminSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    role: AdminRole,
    has_password: z.boolean(),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
    last_login_at: z.string().nullable().openapi({ format: 'date-time' }),
  })
  .openapi('Admin');

export { body, IdParam, json, problem, TokenPairSchema } from '@svc/http';

import { z } from '@hono/zod-openapi';

const Timestamp = z.string().openapi({ format: 'date-time' });

export const ApiTokenSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    admin_id: z.string().openapi({ description: 'its creator: the token acts as this admin, with the role the admin has now' }),
    scopes: z.array(z.string()),
    prefix: z.string().openapi({ description: 'the first characters of the secret, to tell tokens apart' }),
    allowed_ips: z.array(z.string()).nullable(),
    expires_at: Timestamp.nullable(),
    last_used_at: Timestamp.nullable(),
    last_used_ip: z.string().nullable(),
    revoked_at: Timestamp.nullable(),
    created_at: Timestamp,
  })
  .openapi('ApiToken');

export const CreatedApiTokenSchema = ApiTokenSchema.extend({
  token: z.string().openapi({ description: 'the secret: shown this once, never again (send it as `Authorization: Bearer <token>`)' }),
}).openapi('CreatedApiToken');

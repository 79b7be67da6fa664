import { z } from '@hono/zod-openapi';

export const AcmeAccountSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    directory_url: z.string(),
    registered: z.boolean().openapi({ description: 'the CA took the account (the worker registers it after create)' }),
    registered_at: z.string().nullable().openapi({ format: 'date-time' }),
    registration_error: z.string().nullable().openapi({
      description:
        "why the last registration attempt failed (the rule that refused the directory, 'not reachable', the CA's words); null once registered. Viewers read 'failed (owners and admins read why)'",
    }),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('AcmeAccount');

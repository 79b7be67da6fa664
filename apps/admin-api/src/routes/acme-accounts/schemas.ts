import { z } from '@hono/zod-openapi';

export const AcmeAccountSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    directory_url: z.string(),
    registered: z.boolean().openapi({ description: 'registered with the ACME server (done when a certificate is first issued)' }),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('AcmeAccount');

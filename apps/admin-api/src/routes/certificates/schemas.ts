import { z } from '@hono/zod-openapi';

const Timestamp = z.string().openapi({ format: 'date-time' });
export const CertificateKind = z.enum(['uploaded', 'acme']);
export const CertificateSchema = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    kind: CertificateKind,
    status: z.string(),
    domains: z.array(z.string()),
    issuer: z.string().nullable(),
    not_before: Timestamp.nullable(),
    not_after: Timestamp.nullable(),
    cert_pem: z.string().nullable(),
    has_key: z.boolean().openapi({ description: 'the key is write-only' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('Certificate');

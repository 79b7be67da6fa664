import { z } from '@hono/zod-openapi';

const Timestamp = z.string().openapi({ format: 'date-time' });
export const CertificateKind = z.enum(['uploaded', 'acme']);
export const CertificateSchema = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    kind: CertificateKind,
    status: z.string().openapi({ description: 'uploaded: active; acme: pending, issued, or failed (the first issuance failed)' }),
    domains: z.array(z.string()),
    issuer: z.string().nullable(),
    not_before: Timestamp.nullable(),
    not_after: Timestamp.nullable(),
    cert_pem: z.string().nullable(),
    has_key: z.boolean().openapi({ description: 'the key is write-only' }),
    acme_account_id: z.string().nullable(),
    dns_provider_id: z.string().nullable(),
    last_error: z.string().nullable().openapi({
      description:
        "why the last issuance or renewal failed (the rule that refused a destination, 'not reachable', the CA's or DNS provider's words); null after a success. Viewers read 'failed (owners and admins read why)'",
    }),
    issuing: z.boolean().openapi({ description: 'acme: a worker is ordering it now' }),
    next_attempt_at: Timestamp.nullable().openapi({ description: 'acme: the next issuance, retry or renewal (30 days before expiry)' }),
    last_attempt_at: Timestamp.nullable(),
    failed_attempts: z.number().int().openapi({ description: 'acme: failed attempts in a row' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('Certificate');

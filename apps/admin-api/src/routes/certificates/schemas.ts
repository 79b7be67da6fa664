import { z } from '@hono/zod-openapi';

const Timestamp = z.string().openapi({ format: 'date-time' });
export const CertificateKind = z.enum(['uploaded', 'acme']);
export const CertPem = z.string().min(1).max(65536).openapi({ description: 'PEM chain, leaf first' });
export const KeyPem = z
  .string()
  .min(1)
  .max(16384)
  .openapi({ writeOnly: true, description: 'PEM private key of the leaf (unencrypted); never returned' });
export const Domains = z
  .array(z.string().min(1).max(253))
  .max(100)
  .openapi({ description: 'names the certificate covers; default: its DNS subjectAltNames' });
export const CertificateName = z.string().max(100);

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

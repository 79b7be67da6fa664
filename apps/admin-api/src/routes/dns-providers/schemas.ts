import { z } from '@hono/zod-openapi';
import { DNS_PROVIDER_KIND_NAMES, DNS_PROVIDER_KINDS } from '@svc/domain';

const kindDocs = Object.values(DNS_PROVIDER_KINDS)
  .map(
    (k) =>
      `${k.kind}: ${Object.entries(k.fields)
        .map(([n, f]) => `${n}${f.required ? '' : ' (optional)'}`)
        .join(', ')}`,
  )
  .join('; ');

export const DnsKind = z.enum(DNS_PROVIDER_KIND_NAMES).openapi({ description: 'fixed at creation' });
export const DnsName = z.string().trim().min(1).max(100);
export const DnsCredentials = z
  .record(z.string(), z.string())
  .openapi({ description: `Write-only; the whole set, checked against the kind. ${kindDocs}.` });

export const DnsProviderSchema = z
  .object({
    id: z.string(),
    kind: z.string(),
    name: z.string(),
    credentials_set: z.array(z.string()).openapi({ description: 'names of the stored credentials; values are never returned' }),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('DnsProvider');

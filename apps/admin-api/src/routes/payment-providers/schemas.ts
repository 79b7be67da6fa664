import { z } from '@hono/zod-openapi';
import { PAYMENT_PROVIDER_KIND_NAMES, PAYMENT_PROVIDER_KINDS } from '@svc/domain';

const kindDocs = Object.values(PAYMENT_PROVIDER_KINDS)
  .map(
    (k) =>
      `${k.kind}: ${Object.entries(k.fields)
        .map(([n, f]) => `${n} (${f.secret ? 'secret, write-only' : 'public'}${f.required ? ', required' : ', optional'})`)
        .join(', ')}`,
  )
  .join('; ');

export const ProviderKind = z.enum(PAYMENT_PROVIDER_KIND_NAMES).openapi({ description: 'fixed at creation' });
export const ProviderName = z.string().trim().min(1).max(100);

export const ProviderConfigInput = z
  .record(z.string(), z.string().nullable())
  .openapi({ description: `Settings of the kind; secrets are write-only. ${kindDocs}.` });

export const PaymentProviderSchema = z
  .object({
    id: z.string(),
    kind: z.string(),
    name: z.string(),
    enabled: z.boolean(),
    config: z.record(z.string(), z.string()).openapi({ description: 'public settings only' }),
    secrets_set: z.array(z.string()).openapi({ description: 'names of the secret settings that hold a value; values are never returned' }),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('PaymentProvider');

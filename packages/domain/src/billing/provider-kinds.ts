import { ValidationError } from '../errors.ts';
import { type FieldSpecs, stringField } from './config-fields.ts';

/**
 * The registry of payment provider kinds: the one place that says which settings a kind
 * has and which of them are secret. Secrets are write-only (sealed in secrets_enc); public
 * settings are stored in `config` and shown. The payments issue adds each kind's behaviour
 * (checkout, webhooks) next to these declarations.
 */
export interface PaymentProviderKind {
  kind: string;
  description: string;
  fields: FieldSpecs;
}

export const PAYMENT_PROVIDER_KINDS = {
  stripe: {
    kind: 'stripe',
    description: 'Stripe Checkout; webhooks signed with the endpoint secret',
    fields: {
      secret_key: stringField({ secret: true, required: true, prefix: 'sk_', description: 'API secret key (sk_live_… or sk_test_…)' }),
      webhook_secret: stringField({
        secret: true,
        required: true,
        prefix: 'whsec_',
        description: 'Webhook endpoint signing secret (whsec_…)',
      }),
      publishable_key: stringField({ secret: false, required: false, prefix: 'pk_', description: 'Publishable key (pk_…), optional' }),
    },
  },
  manual: {
    kind: 'manual',
    description: 'Payment outside the system (bank transfer, cash); an admin confirms it',
    fields: {
      instructions: stringField({ secret: false, required: true, max: 4000, description: 'What the client is told to do to pay' }),
    },
  },
} as const satisfies Record<string, PaymentProviderKind>;

export type PaymentProviderKindName = keyof typeof PAYMENT_PROVIDER_KINDS;

export const PAYMENT_PROVIDER_KIND_NAMES = Object.keys(PAYMENT_PROVIDER_KINDS) as [PaymentProviderKindName, ...PaymentProviderKindName[]];

export function paymentProviderKind(kind: string): PaymentProviderKind {
  const k = Object.hasOwn(PAYMENT_PROVIDER_KINDS, kind) ? PAYMENT_PROVIDER_KINDS[kind as PaymentProviderKindName] : undefined;
  if (!k) throw new ValidationError('unknown payment provider kind', { kind: `must be one of ${PAYMENT_PROVIDER_KIND_NAMES.join(', ')}` });
  return k;
}

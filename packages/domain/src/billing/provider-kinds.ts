import { ValidationError } from '../errors.ts';
import { type FieldSpecs, stringField } from './config-fields.ts';
import { checkSourceCidrs, YOOKASSA_SOURCE_CIDRS } from './providers/yookassa-sources.ts';

/**
 * The registry of payment provider kinds: the one place that says which settings a kind
 * has and which of them are secret. Secrets are write-only (sealed in secrets_enc); public
 * settings are stored in `config` and shown. Each kind's behaviour (checkout, webhooks,
 * re-reads) is its adapter in @svc/providers, built by `paymentProviderAdapter` there.
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
  cryptobot: {
    kind: 'cryptobot',
    description: 'CryptoBot (Crypto Pay): crypto invoices priced in fiat; webhooks signed with the API token',
    fields: {
      api_token: stringField({
        secret: true,
        required: true,
        pattern: /^\d+:[A-Za-z0-9_-]+$/,
        patternReason: 'must be a Crypto Pay API token (<app id>:<key>)',
        max: 255,
        description: 'Crypto Pay API token of the app (from @CryptoBot or @CryptoTestnetBot, /pay)',
      }),
      network: stringField({
        secret: false,
        required: false,
        pattern: /^(mainnet|testnet)$/,
        patternReason: 'must be mainnet or testnet',
        description: 'mainnet (default, pay.crypt.bot) or testnet (testnet-pay.crypt.bot)',
      }),
    },
  },
  yookassa: {
    kind: 'yookassa',
    description: 'YooKassa: card and wallet payments in RUB; unsigned notifications, trusted by re-reading the payment',
    fields: {
      shop_id: stringField({
        secret: false,
        required: true,
        pattern: /^\d{1,20}$/,
        patternReason: 'must be the numeric shopId',
        description: 'shopId of the store',
      }),
      secret_key: stringField({
        secret: true,
        required: true,
        pattern: /^(live|test)_[A-Za-z0-9_-]+$/,
        patternReason: 'must be a YooKassa secret key (live_… or test_…)',
        description: 'Secret key of the store (live_… or test_…)',
      }),
      allowed_source_cidrs: {
        secret: false,
        required: false,
        description: `Addresses and CIDR ranges (v4, v6) notifications may come from, separated by commas; default YooKassa's published ranges (${YOOKASSA_SOURCE_CIDRS}); "any" turns the check off`,
        check: (v: string) =>
          v.trim().length === 0 ? 'must not be empty' : v.length > 4000 ? 'must be at most 4000 characters' : checkSourceCidrs(v),
      },
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

import {
  PAYMENT_PROVIDER_KIND_NAMES,
  type PaymentProviderPort,
  type ProviderAdapterDeps,
  UnavailableError,
  ValidationError,
} from '@svc/domain';
import { type CryptobotNetwork, cryptobotAdapter } from './cryptobot-adapter.ts';
import { manualAdapter } from './manual-adapter.ts';
import { stripeAdapter } from './stripe-adapter.ts';
import { yookassaAdapter } from './yookassa-adapter.ts';

/**
 * The port of a stored provider: its kind, its public `config` and its opened secrets
 * (`openProviderSecrets`). A provider missing a setting its adapter needs is not usable:
 * UnavailableError naming the setting, never its value.
 */
export function paymentProviderAdapter(
  kind: string,
  config: Readonly<Record<string, unknown>>,
  secrets: Readonly<Record<string, string>>,
  deps: ProviderAdapterDeps = {},
): PaymentProviderPort {
  const need = (from: Readonly<Record<string, unknown>>, name: string): string => {
    const v = from[name];
    if (typeof v !== 'string' || v.length === 0)
      throw new UnavailableError(`the ${kind} payment provider is not configured: ${name} is not set`);
    return v;
  };
  const optional = (name: string): string | undefined => (typeof config[name] === 'string' ? (config[name] as string) : undefined);
  switch (kind) {
    case 'stripe':
      return stripeAdapter({ secret_key: need(secrets, 'secret_key'), webhook_secret: need(secrets, 'webhook_secret') }, deps);
    case 'cryptobot':
      return cryptobotAdapter(
        { api_token: need(secrets, 'api_token'), network: optional('network') === 'testnet' ? 'testnet' : ('mainnet' as CryptobotNetwork) },
        deps,
      );
    case 'yookassa':
      return yookassaAdapter(
        {
          shop_id: need(config, 'shop_id'),
          secret_key: need(secrets, 'secret_key'),
          allowed_source_cidrs: optional('allowed_source_cidrs'),
        },
        deps,
      );
    case 'manual':
      return manualAdapter({ instructions: need(config, 'instructions') });
    default:
      throw new ValidationError('unknown payment provider kind', { kind: `must be one of ${PAYMENT_PROVIDER_KIND_NAMES.join(', ')}` });
  }
}

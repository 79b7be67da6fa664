import type { Config } from '@svc/config';
import type { PaymentProviderRow } from '@svc/db';
import { ConflictError } from '../errors.ts';
import { publicBaseUrl } from '../shared/public-url.ts';
import type { Sealer } from '../shared/sealed.ts';
import type { PaymentProviderKind } from './provider-kinds.ts';

export interface PaymentProviderView {
  id: string;
  kind: string;
  name: string;
  enabled: boolean;
  /** Public settings only. */
  config: Record<string, string>;
  /** Names of the secret settings that hold a value; the values are never returned. */
  secrets_set: string[];
  /** Where the provider sends its webhooks ({public_base_url}/webhooks/payments/{id}); null for manual providers. */
  webhook_url: string | null;
  created_at: string;
  updated_at: string;
}

/** The sealed secrets of a provider, opened (only inside the domain). */
export function openProviderSecrets(secrets: Sealer, sealed: string | null): Record<string, string> {
  if (sealed === null) return {};
  return JSON.parse(secrets.open(sealed)) as Record<string, string>;
}

export const sealProviderSecrets = (secrets: Sealer, values: Record<string, string>): string | null =>
  Object.keys(values).length === 0 ? null : secrets.seal(JSON.stringify(values));

export const paymentProviderView = (r: PaymentProviderRow, secretNames: string[], config: Pick<Config, 'http'>): PaymentProviderView => ({
  id: r.id,
  kind: r.kind,
  name: r.name,
  enabled: r.enabled,
  config: r.config as Record<string, string>,
  secrets_set: [...secretNames].sort(),
  webhook_url: r.kind === 'manual' ? null : `${publicBaseUrl(config)}/webhooks/payments/${encodeURIComponent(r.id)}`,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

/** A provider is enabled only with every required secret set. */
export function assertEnableable(kind: PaymentProviderKind, secrets: Record<string, string>): void {
  const missing = Object.entries(kind.fields)
    .filter(([name, f]) => f.secret && f.required && secrets[name] === undefined)
    .map(([name]) => name);
  if (missing.length === 0) return;
  throw new ConflictError(
    `the provider cannot be enabled without its secrets: ${missing.join(', ')}`,
    Object.fromEntries(missing.map((m) => [`config.${m}`, 'required while the provider is enabled'])),
    { missing_secrets: missing },
  );
}

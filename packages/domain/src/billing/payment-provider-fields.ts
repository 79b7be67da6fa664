import { z } from 'zod';
import { trimmedName } from '../shared/fields.ts';
import { PAYMENT_PROVIDER_KIND_NAMES, PAYMENT_PROVIDER_KINDS } from './provider-kinds.ts';

const kindDocs = Object.values(PAYMENT_PROVIDER_KINDS)
  .map(
    (k) =>
      `${k.kind}: ${Object.entries(k.fields)
        .map(([n, f]) => `${n} (${f.secret ? 'secret, write-only' : 'public'}${f.required ? ', required' : ', optional'})`)
        .join(', ')}`,
  )
  .join('; ');

export const PaymentProviderKindField = z.enum(PAYMENT_PROVIDER_KIND_NAMES);

export const PaymentProviderName = trimmedName(100);

/**
 * The envelope of a provider's settings: names to values (null removes, on a merge). Which
 * names a kind has, which are secret and what each value must look like is the kind's own
 * declaration (provider-kinds.ts), checked by the use case: an update's kind is the stored one.
 */
export const PaymentProviderConfig = z
  .record(z.string(), z.string().nullable())
  .meta({ description: `Settings of the kind; secrets are write-only. ${kindDocs}.` });

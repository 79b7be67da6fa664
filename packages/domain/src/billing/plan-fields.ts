import { z } from 'zod';
import { plainText, RefId, trimmedName } from '../shared/fields.ts';
import { TrafficLimitBytes } from '../subscriptions/subscription-fields.ts';

const KNOWN_CURRENCIES: ReadonlySet<string> = new Set(
  typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('currency') : [],
);

export const PlanName = trimmedName(100);

export const PlanPrice = z
  .number()
  .int()
  .min(0)
  .max(Number.MAX_SAFE_INTEGER)
  .meta({ description: 'in minor units of the currency (cents)', example: 990 });

/** ISO 4217: three upper-case letters, and a code the runtime's ICU knows when it has a list. */
export const CurrencyCode = z
  .string()
  .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code in upper case (EUR)')
  .refine((c) => KNOWN_CURRENCIES.size === 0 || KNOWN_CURRENCIES.has(c), 'not an ISO 4217 currency code')
  .meta({ description: 'ISO 4217, upper case', example: 'EUR' });

/** The traffic period of a subscription bought with the plan (the subscription's renewal). */
export { SubscriptionRenewal as PlanRenewal } from '../subscriptions/subscription-fields.ts';

export const PlanDurationDays = z.number().int().min(1).max(36_500);

/** What a subscription bought with the plan may use per period (the subscription's own rule). */
export const PlanTrafficLimit = TrafficLimitBytes.meta({ description: 'bytes per period; null: unlimited' });

/** The access groups a plan grants (each must exist: checked by the use case). */
export const PlanAccessGroupIds = z.array(RefId).max(1000).meta({ description: 'access groups granted by the plan; each must exist' });

/** What the plan includes, in the operator's words: plain text for the portal's plan cards (null or empty: none). */
export const PlanDescription = plainText(1000)
  .nullable()
  .transform((v) => (v === '' ? null : v))
  .meta({ description: "what the plan includes, in the operator's words (plain text, shown to customers); null: none" });

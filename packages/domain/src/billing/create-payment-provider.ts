import { z } from 'zod';
import { ValidationError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { newId } from '../shared/ids.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { checkFields } from './config-fields.ts';
import { PaymentProviderConfig, PaymentProviderKindField, PaymentProviderName } from './payment-provider-fields.ts';
import { assertEnableable, type PaymentProviderView, paymentProviderView, sealProviderSecrets } from './payment-provider-view.ts';
import { paymentProviderKind } from './provider-kinds.ts';

/**
 * POST /payment-providers and fixtures. `config` holds public and secret settings in one
 * object; the use case checks them against the kind, splits the secrets off and seals them.
 */
export const CreatePaymentProviderInput = z
  .object({
    kind: PaymentProviderKindField.meta({ description: 'fixed at creation' }),
    name: PaymentProviderName,
    enabled: z.boolean().optional().meta({ description: 'default false; true needs every required secret' }),
    config: PaymentProviderConfig.optional(),
  })
  .strict()
  .brand<'CreatePaymentProviderInput'>();
export type CreatePaymentProviderInput = z.output<typeof CreatePaymentProviderInput>;

export async function createPaymentProvider(ctx: DomainContext, input: CreatePaymentProviderInput): Promise<PaymentProviderView> {
  const kind = paymentProviderKind(input.kind);
  const given = input.config ?? {};
  const errors = checkFields(kind.fields, given, { prefix: 'config.', kind: kind.kind, allowNull: false });
  const pub: Record<string, string> = {};
  const secrets: Record<string, string> = {};
  for (const [name, f] of Object.entries(kind.fields)) {
    const v = given[name];
    if (typeof v === 'string') (f.secret ? secrets : pub)[name] = v;
    else if (!f.secret && f.required && v === undefined) errors[`config.${name}`] ??= 'required';
  }
  if (Object.keys(errors).length > 0) throw new ValidationError('invalid payment provider settings', errors);
  const enabled = input.enabled ?? false;
  if (enabled) assertEnableable(kind, secrets);
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const now = ctx.clock.now();
    const row = await trx
      .insertInto('payment_providers')
      .values({
        id: newId('ppr', now.getTime()),
        kind: kind.kind,
        name: input.name,
        enabled,
        config: JSON.stringify(pub),
        secrets_enc: sealProviderSecrets(ctx.secrets, secrets),
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const secretNames = Object.keys(secrets).sort();
    uow.audit({
      action: 'payment_provider.created',
      entity_type: 'payment_provider',
      entity_id: row.id,
      details: { kind: kind.kind, name: row.name, enabled, config: Object.keys(pub).sort(), secrets_set: secretNames },
    });
    return paymentProviderView(row, secretNames, ctx.config);
  });
}

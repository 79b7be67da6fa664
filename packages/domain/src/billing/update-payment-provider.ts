import { z } from 'zod';
import { NotFoundError, ValidationError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { isEmptyPatch } from '../shared/input.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { checkFields } from './config-fields.ts';
import { PaymentProviderConfig, PaymentProviderName } from './payment-provider-fields.ts';
import {
  assertEnableable,
  openProviderSecrets,
  type PaymentProviderView,
  paymentProviderView,
  sealProviderSecrets,
} from './payment-provider-view.ts';
import { paymentProviderKind } from './provider-kinds.ts';
import { getPaymentProvider } from './read-payment-providers.ts';

/** PATCH /payment-providers/{id}: a merge; the kind is fixed at creation. */
export const UpdatePaymentProviderInput = z
  .object({
    name: PaymentProviderName.optional(),
    enabled: z.boolean().optional(),
    config: PaymentProviderConfig.optional().meta({
      description: 'merged field by field: a value sets the field, null removes it (secrets included)',
    }),
  })
  .strict()
  .brand<'UpdatePaymentProviderInput'>();
export type UpdatePaymentProviderInput = z.output<typeof UpdatePaymentProviderInput>;

/**
 * PATCH merge. The kind is fixed at creation. An enabled provider must keep every required
 * secret: enabling without them, or removing one while enabled, is a 409 naming them.
 */
export async function updatePaymentProvider(
  ctx: DomainContext,
  id: string,
  input: UpdatePaymentProviderInput,
): Promise<PaymentProviderView> {
  if (isEmptyPatch(input)) return getPaymentProvider(ctx, id);
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const current = await trx.selectFrom('payment_providers').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!current) throw new NotFoundError('payment provider', id);
    const kind = paymentProviderKind(current.kind);
    const patch = input.config ?? {};
    const errors = checkFields(kind.fields, patch, { prefix: 'config.', kind: kind.kind, allowNull: true });
    const pub: Record<string, string> = { ...(current.config as Record<string, string>) };
    const secrets = openProviderSecrets(ctx.secrets, current.secrets_enc);
    const configChanged: string[] = [];
    const secretsChanged: string[] = [];
    for (const [name, v] of Object.entries(patch)) {
      const f = Object.hasOwn(kind.fields, name) ? kind.fields[name] : undefined;
      if (!f || errors[`config.${name}`]) continue;
      const target = f.secret ? secrets : pub;
      if (v === null) {
        if (!f.secret && f.required) {
          errors[`config.${name}`] = 'required; it can be changed but not removed';
          continue;
        }
        delete target[name];
      } else target[name] = v as string;
      (f.secret ? secretsChanged : configChanged).push(name);
    }
    if (Object.keys(errors).length > 0) throw new ValidationError('invalid payment provider settings', errors);
    const enabled = input.enabled ?? current.enabled;
    if (enabled) assertEnableable(kind, secrets);
    const now = ctx.clock.now();
    const row = await trx
      .updateTable('payment_providers')
      .set({
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
        ...(configChanged.length > 0 ? { config: JSON.stringify(pub) } : {}),
        ...(secretsChanged.length > 0 ? { secrets_enc: sealProviderSecrets(ctx.secrets, secrets) } : {}),
        updated_at: now,
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const changed = Object.keys(input).filter((k) => input[k as keyof UpdatePaymentProviderInput] !== undefined);
    uow.audit({
      action: 'payment_provider.updated',
      entity_type: 'payment_provider',
      entity_id: id,
      // Names only: secret values never enter the audit log.
      details: {
        changed,
        ...(input.enabled !== undefined ? { enabled: { from: current.enabled, to: input.enabled } } : {}),
        ...(configChanged.length > 0 ? { config_changed: configChanged.sort() } : {}),
        ...(secretsChanged.length > 0 ? { secrets_changed: secretsChanged.sort() } : {}),
      },
    });
    return paymentProviderView(row, Object.keys(secrets), ctx.config);
  });
}

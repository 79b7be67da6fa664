import { z } from 'zod';
import { DeviceLimit, SpeedCapBps } from '../limits/limit-fields.ts';
import type { DomainContext } from '../shared/context.ts';
import { newId } from '../shared/ids.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import {
  CurrencyCode,
  PlanAccessGroupIds,
  PlanDescription,
  PlanDurationDays,
  PlanName,
  PlanPrice,
  PlanRenewal,
  PlanTrafficLimit,
} from './plan-fields.ts';
import { checkAccessGroups, type PlanView, planView, replacePlanAccessGroups } from './plan-view.ts';

/** POST /plans and fixtures. */
export const CreatePlanInput = z
  .object({
    name: PlanName,
    price: PlanPrice,
    currency: CurrencyCode,
    duration_days: PlanDurationDays,
    traffic_limit_bytes: PlanTrafficLimit.optional(),
    device_limit: DeviceLimit.optional(),
    upload_bps: SpeedCapBps('upload').optional(),
    download_bps: SpeedCapBps('download').optional(),
    description: PlanDescription.optional(),
    renewal: PlanRenewal.optional().meta({
      description: 'when the traffic of a subscription bought with the plan starts over; default no_reset',
    }),
    access_group_ids: PlanAccessGroupIds.optional(),
    archived: z.boolean().optional().meta({ description: 'default false' }),
  })
  .strict()
  .brand<'CreatePlanInput'>();
export type CreatePlanInput = z.output<typeof CreatePlanInput>;

/** A plan is what a client buys; it changes no node configuration (no revision bump). */
export async function createPlan(ctx: DomainContext, input: CreatePlanInput): Promise<PlanView> {
  const { currency } = input;
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const groups = await checkAccessGroups(trx, input.access_group_ids ?? []);
    const now = ctx.clock.now();
    const row = await trx
      .insertInto('plans')
      .values({
        id: newId('pln', now.getTime()),
        name: input.name,
        price: input.price,
        currency,
        duration_days: input.duration_days,
        traffic_limit_bytes: input.traffic_limit_bytes ?? null,
        device_limit: input.device_limit ?? null,
        upload_bps: input.upload_bps ?? null,
        download_bps: input.download_bps ?? null,
        description: input.description ?? null,
        renewal: input.renewal ?? 'no_reset',
        archived: input.archived ?? false,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await replacePlanAccessGroups(trx, row.id, groups);
    uow.audit({
      action: 'plan.created',
      entity_type: 'plan',
      entity_id: row.id,
      details: { name: row.name, price: Number(row.price), currency, duration_days: row.duration_days, access_group_ids: groups },
    });
    return planView(row, groups);
  });
}

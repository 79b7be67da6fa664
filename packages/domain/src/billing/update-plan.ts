import { z } from 'zod';
import { NotFoundError } from '../errors.ts';
import { DeviceLimit, SpeedCapBps } from '../limits/limit-fields.ts';
import type { DomainContext } from '../shared/context.ts';
import { isEmptyPatch } from '../shared/input.ts';
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
import { checkAccessGroups, type PlanView, planAccessGroups, planView, replacePlanAccessGroups } from './plan-view.ts';
import { getPlan } from './read-plans.ts';

/** PATCH /plans/{id}: a merge; absent fields stay as they are. */
export const UpdatePlanInput = z
  .object({
    name: PlanName.optional(),
    price: PlanPrice.optional(),
    currency: CurrencyCode.optional(),
    duration_days: PlanDurationDays.optional(),
    traffic_limit_bytes: PlanTrafficLimit.optional(),
    device_limit: DeviceLimit.optional(),
    upload_bps: SpeedCapBps('upload').optional(),
    download_bps: SpeedCapBps('download').optional(),
    description: PlanDescription.optional(),
    renewal: PlanRenewal.optional(),
    access_group_ids: PlanAccessGroupIds.optional().meta({ description: 'replaces the whole list' }),
    archived: z.boolean().optional(),
  })
  .strict()
  .brand<'UpdatePlanInput'>();
export type UpdatePlanInput = z.output<typeof UpdatePlanInput>;

/**
 * PATCH merge. A price change applies to later purchases only (payments keep their own
 * amount). Archiving hides the plan from sale and keeps its history.
 */
export async function updatePlan(ctx: DomainContext, id: string, input: UpdatePlanInput): Promise<PlanView> {
  if (isEmptyPatch(input)) return getPlan(ctx, id);
  const { currency } = input;
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const current = await trx.selectFrom('plans').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!current) throw new NotFoundError('plan', id);
    const groups = input.access_group_ids !== undefined ? await checkAccessGroups(trx, input.access_group_ids) : undefined;
    const now = ctx.clock.now();
    const row = await trx
      .updateTable('plans')
      .set({
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.price !== undefined ? { price: input.price } : {}),
        ...(currency !== undefined ? { currency } : {}),
        ...(input.duration_days !== undefined ? { duration_days: input.duration_days } : {}),
        ...(input.traffic_limit_bytes !== undefined ? { traffic_limit_bytes: input.traffic_limit_bytes } : {}),
        ...(input.renewal !== undefined ? { renewal: input.renewal } : {}),
        ...(input.device_limit !== undefined ? { device_limit: input.device_limit } : {}),
        ...(input.upload_bps !== undefined ? { upload_bps: input.upload_bps } : {}),
        ...(input.download_bps !== undefined ? { download_bps: input.download_bps } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(input.archived !== undefined ? { archived: input.archived } : {}),
        updated_at: now,
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (groups !== undefined) await replacePlanAccessGroups(trx, id, groups);
    const finalGroups = groups ?? (await planAccessGroups(trx, [id])).get(id) ?? [];
    const changed = Object.keys(input).filter((k) => input[k as keyof UpdatePlanInput] !== undefined);
    uow.audit({
      action: 'plan.updated',
      entity_type: 'plan',
      entity_id: id,
      details: {
        changed,
        ...(input.price !== undefined ? { price: { from: Number(current.price), to: input.price } } : {}),
        ...(input.archived !== undefined ? { archived: { from: current.archived, to: input.archived } } : {}),
        ...(groups !== undefined ? { access_group_ids: groups } : {}),
      },
    });
    return planView(row, finalGroups);
  });
}

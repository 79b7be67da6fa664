import { deletePlan, getPlan, parseInput, UpdatePlanInput, updatePlan } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessGroup } from '../customers-support.ts';
import { payment, subscriptionBoughtWith } from './billing-support.ts';

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

describe('deletePlan and its referential rules', () => {
  it('deletes an unreferenced plan with its group grants; a second delete is not found', async () => {
    const { id } = await fixtures(bed.ctx()).plan({ access_group_ids: [await accessGroup(bed.ctx())] });
    await deletePlan(bed.ctx(), id);
    await expect(getPlan(bed.ctx(), id)).rejects.toMatchObject({ type: 'not-found' });
    expect(await bed.deps.db.selectFrom('plan_access_groups').selectAll().where('plan_id', '=', id).execute()).toEqual([]);
    await expect(deletePlan(bed.ctx(), id)).rejects.toMatchObject({ type: 'not-found' });
  });

  it('is refused while payments reference it, naming them in blocked_by and suggesting archiving, which stays possible', async () => {
    const { id } = await fixtures(bed.ctx()).plan();
    const [p1, p2] = [await payment(bed.ctx(), { plan_id: id }), await payment(bed.ctx(), { plan_id: id })];
    await expect(deletePlan(bed.ctx(), id)).rejects.toMatchObject({
      type: 'conflict',
      message: expect.stringMatching(/2 payments.*archive/),
      extra: { blocked_by: { payments: [p1, p2].sort() } },
    });
    expect((await getPlan(bed.ctx(), id)).id).toBe(id);
    expect((await updatePlan(bed.ctx(), id, parseInput(UpdatePlanInput, { archived: true }))).archived).toBe(true);
  });

  it('is refused while subscriptions bought with it reference it', async () => {
    const { id } = await fixtures(bed.ctx()).plan();
    const sub = await subscriptionBoughtWith(bed.ctx(), id);
    await expect(deletePlan(bed.ctx(), id)).rejects.toMatchObject({ type: 'conflict', extra: { blocked_by: { subscriptions: [sub] } } });
  });
});

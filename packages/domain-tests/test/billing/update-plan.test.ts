import { getPlan, parseInput, UpdatePlanInput, updatePlan } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessGroup } from '../customers-support.ts';

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

const update = (id: string, input: Record<string, unknown>) => updatePlan(bed.ctx(), id, parseInput(UpdatePlanInput, input));

describe('updatePlan: a merge', () => {
  it('changes only the fields given; access_group_ids replaces the list; a null traffic limit is unlimited', async () => {
    const [g1, g2, g3] = [await accessGroup(bed.ctx()), await accessGroup(bed.ctx()), await accessGroup(bed.ctx())];
    const created = await fixtures(bed.ctx()).plan({ name: 'Monthly', traffic_limit_bytes: 1000, access_group_ids: [g1, g2] });
    bed.clock.advance(1000);
    const res = await update(created.id, { price: 1290, access_group_ids: [g3] });
    expect(res).toMatchObject({
      name: 'Monthly',
      price: 1290,
      currency: 'EUR',
      traffic_limit_bytes: 1000,
      access_group_ids: [g3],
      archived: false,
    });
    expect(res.updated_at > created.updated_at).toBe(true);
    expect(res.created_at).toBe(created.created_at);
    const links = await bed.deps.db.selectFrom('plan_access_groups').select('access_group_id').where('plan_id', '=', created.id).execute();
    expect(links.map((l) => l.access_group_id)).toEqual([g3]);

    expect(await update(created.id, { traffic_limit_bytes: null, name: 'Renamed' })).toMatchObject({
      traffic_limit_bytes: null,
      name: 'Renamed',
      price: 1290,
      access_group_ids: [g3],
    });
    expect((await update(created.id, { access_group_ids: [] })).access_group_ids).toEqual([]);
    expect(await update(created.id, {})).toMatchObject({ name: 'Renamed', access_group_ids: [] });
  });

  it('the description is set, kept by a patch without it, and cleared by null or an empty text', async () => {
    const plan = await fixtures(bed.ctx()).plan();
    expect(plan.description).toBeNull();
    expect((await update(plan.id, { description: 'Two devices' })).description).toBe('Two devices');
    expect((await update(plan.id, { price: 5 })).description).toBe('Two devices');
    expect((await update(plan.id, { description: '' })).description).toBeNull();
    await update(plan.id, { description: 'Again' });
    expect((await update(plan.id, { description: null })).description).toBeNull();
  });

  it('unknown access groups are refused by position and change nothing; an unknown plan is not found', async () => {
    const plan = await fixtures(bed.ctx()).plan();
    await expect(update(plan.id, { access_group_ids: ['agr_unknown'], price: 1 })).rejects.toMatchObject({
      type: 'validation',
      errors: { 'access_group_ids.0': expect.stringContaining('agr_unknown') },
    });
    expect((await getPlan(bed.ctx(), plan.id)).price).toBe(plan.price);
    await expect(update('pln_nothere', { price: 1 })).rejects.toMatchObject({ type: 'not-found' });
  });
});

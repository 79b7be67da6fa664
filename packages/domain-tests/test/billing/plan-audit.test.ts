import { deletePlan, parseInput, UpdatePlanInput, updatePlan } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures, TEST_OWNER } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessGroup, servedNode } from '../customers-support.ts';
import { auditOf, revisionsOf } from '../support.ts';

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

describe('plans: audit and node configuration', () => {
  it('create, update and delete are audited by the acting admin, with the price, currency, groups and what changed', async () => {
    const g = await accessGroup(bed.ctx());
    const { id } = await fixtures(bed.ctx()).plan({ price: 990, currency: 'EUR', access_group_ids: [g] });
    await updatePlan(bed.ctx(), id, parseInput(UpdatePlanInput, { price: 100, archived: true }));
    await deletePlan(bed.ctx(), id);
    const rows = await auditOf(bed.ctx(), id);
    expect(rows.map((r) => r.action)).toEqual(['plan.created', 'plan.updated', 'plan.deleted']);
    for (const r of rows) expect(r).toMatchObject({ actor_type: 'admin', actor_id: TEST_OWNER.id, entity_type: 'plan', entity_id: id });
    expect(rows[0]?.details).toMatchObject({ price: 990, currency: 'EUR', access_group_ids: [g] });
    expect(rows[1]?.details).toMatchObject({
      changed: ['price', 'archived'],
      price: { from: 990, to: 100 },
      archived: { from: false, to: true },
    });
  });

  it('a plan changes no node configuration: no revision moves when a plan grants a served group, changes or goes', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const before = await revisionsOf(bed.ctx(), [node]);
    const { id } = await fixtures(bed.ctx()).plan({ access_group_ids: groups });
    await updatePlan(bed.ctx(), id, parseInput(UpdatePlanInput, { access_group_ids: [], archived: true }));
    await deletePlan(bed.ctx(), id);
    expect(await revisionsOf(bed.ctx(), [node])).toEqual(before);
  });
});

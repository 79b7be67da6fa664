import { parseInput, UpdateSubscriptionInput, updateSubscription } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedNode } from '../customers-support.ts';

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

const update = (id: string, input: Record<string, unknown>) =>
  updateSubscription(bed.ctx(), id, parseInput(UpdateSubscriptionInput, input));

describe('updateSubscription: a merge', () => {
  it('updates renewal, limit, expiry, groups (deduplicated, sorted) and note; absent fields stay', async () => {
    const [g1] = (await servedNode(bed.ctx())).groups;
    const [g2] = (await servedNode(bed.ctx())).groups;
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: [g1 as string], note: 'keep', traffic_limit_bytes: 10 });
    bed.clock.advance(1000);
    const res = await update(sub.id, { renewal: 'week', access_group_ids: [g2, g1, g2] });
    expect(res).toMatchObject({
      renewal: 'week',
      note: 'keep',
      traffic_limit_bytes: 10,
      access_group_ids: [g1, g2].sort(),
      updated_at: bed.clock.now().toISOString(),
      created_at: sub.created_at,
      link: sub.link,
    });
    expect((await update(sub.id, { access_group_ids: [] })).access_group_ids).toEqual([]);
    expect((await update(sub.id, { note: null })).note).toBeNull();
  });

  it('unknown access groups are refused naming each by its position; an unknown subscription is not found', async () => {
    const sub = await fixtures(bed.ctx()).subscription();
    await expect(update(sub.id, { access_group_ids: ['agr_nope'] })).rejects.toMatchObject({
      type: 'validation',
      errors: { 'access_group_ids.0': expect.stringMatching(/agr_nope/) },
    });
    await expect(update('sub_doesnotexist', { note: 'x' })).rejects.toMatchObject({ type: 'not-found' });
  });
});

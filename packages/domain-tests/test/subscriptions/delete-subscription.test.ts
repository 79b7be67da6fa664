import { deleteSubscription, getSubscription, ingestUsageReport } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedNode } from '../customers-support.ts';

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

describe('deleteSubscription', () => {
  it('removes it with its group links and usage rows; a second delete is not found', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups });
    await ingestUsageReport(bed.deps, node, {
      report_id: 1n,
      entries: [{ subscription_id: sub.id, uplink_bytes: 1n, downlink_bytes: 1n }],
    });
    expect(await bed.deps.db.selectFrom('usage_hourly').selectAll().where('subscription_id', '=', sub.id).execute()).toHaveLength(1);
    await deleteSubscription(bed.ctx(), sub.id);
    await expect(getSubscription(bed.ctx(), sub.id)).rejects.toMatchObject({ type: 'not-found' });
    expect(await bed.deps.db.selectFrom('subscription_access_groups').selectAll().where('subscription_id', '=', sub.id).execute()).toEqual(
      [],
    );
    expect(await bed.deps.db.selectFrom('usage_hourly').selectAll().where('subscription_id', '=', sub.id).execute()).toEqual([]);
    await expect(deleteSubscription(bed.ctx(), sub.id)).rejects.toMatchObject({ type: 'not-found' });
  });
});

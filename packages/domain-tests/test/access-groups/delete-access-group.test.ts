import { deleteAccessGroup, deleteInbound, deletePlan, deleteSubscription, getAccessGroup } from '@svc/domain';
import { describe, expect, it } from 'vitest';
import { auditOf, fileTestbed, refusal } from '../support.ts';

const t = fileTestbed();

const subscriptionGranted = async (groupId: string): Promise<string> => (await t.f.subscription({ access_group_ids: [groupId] })).id;
const planGranting = async (groupId: string): Promise<string> => (await t.f.plan({ access_group_ids: [groupId] })).id;

describe('deleteAccessGroup', () => {
  it('is refused as a conflict naming the subscriptions and plans granted the group; once none is, it deletes, audited', async () => {
    const inbound = await t.f.inbound();
    const g = await t.f.accessGroup({ inbound_ids: [inbound.id] });
    const sub = await subscriptionGranted(g.id);
    const plan = await planGranting(g.id);
    const both = await refusal(deleteAccessGroup(t.bed.ctx(), g.id));
    expect(both.type).toBe('conflict');
    expect(both.extra).toEqual({ blocked_by: { subscriptions: [sub], plans: [plan] } });
    expect(both.message).toContain(sub);
    expect(both.message).toContain(plan);

    await deleteSubscription(t.bed.ctx(), sub);
    expect((await refusal(deleteAccessGroup(t.bed.ctx(), g.id))).extra).toEqual({ blocked_by: { plans: [plan] } });

    await deletePlan(t.bed.ctx(), plan);
    await deleteAccessGroup(t.bed.ctx(), g.id);
    expect(await refusal(getAccessGroup(t.bed.ctx(), g.id))).toMatchObject({ type: 'not-found' });
    // Its inbound is free to go now.
    await deleteInbound(t.bed.ctx(), inbound.id);
    expect((await auditOf(t.bed, g.id)).map((r) => r.action)).toEqual(['access_group.created', 'access_group.deleted']);
  });
});

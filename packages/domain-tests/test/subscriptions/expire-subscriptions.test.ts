import { expireDueSubscriptions, statsOverview } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedNode } from '../customers-support.ts';
import { bumpsOf } from '../support.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

const inFuture = (ms: number) => new Date(bed.clock.now().getTime() + ms);
const stored = async (id: string) =>
  (await bed.deps.db.selectFrom('subscriptions').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;

describe('a subscription that expires by time alone', () => {
  it('is counted as expired by the stats overview before any write', async () => {
    await fixtures(bed.ctx()).subscription({ expires_at: inFuture(60_000) });
    const before = (await statsOverview(bed.ctx(), {})).subscriptions;
    bed.clock.advance(61_000);
    const after = (await statsOverview(bed.ctx(), {})).subscriptions;
    expect(after.expired).toBe(before.expired + 1);
    expect(after.active).toBe(before.active - 1);
  });

  it('expireDueSubscriptions writes it down as the system, once, and bumps only its nodes', async () => {
    const a = await servedNode(bed.ctx());
    const other = await servedNode(bed.ctx());
    const due = await fixtures(bed.ctx()).subscription({ access_group_ids: a.groups, expires_at: inFuture(HOUR) });
    const later = await fixtures(bed.ctx()).subscription({ access_group_ids: other.groups, expires_at: inFuture(10 * DAY) });
    bed.clock.advance(2 * HOUR);
    let count = 0;
    const bumps = await bumpsOf(bed.ctx(), [a.node, other.node], async () => {
      count = await expireDueSubscriptions(bed.system());
    });
    expect(count).toBeGreaterThanOrEqual(1);
    expect(bumps).toEqual({ [a.node]: 1, [other.node]: 0 });
    expect(await stored(due.id)).toBe('expired');
    expect(await stored(later.id)).toBe('active');
    const entries = await bed.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('entity_id', '=', due.id)
      .where('action', '=', 'subscription.expired')
      .execute();
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actor_type: 'system', actor_id: null });
    expect(await expireDueSubscriptions(bed.system())).toBe(0);
  });
});

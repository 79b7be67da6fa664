import {
  enforceTrafficLimits,
  ingestUsageReport,
  parseInput,
  periodStart,
  resetEndedPeriods,
  subscriptionsWithCounters,
  UpdateSubscriptionInput,
  updateSubscription,
} from '@svc/domain';
import { createDomainTestbed, createFakeClock, type DomainTestbed, fixtures } from '@svc/testkit';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedNode } from '../customers-support.ts';
import { revisionsOf } from '../support.ts';

// Each transition with a fake clock, written as the system, audited, and pushed to the nodes
// (a new revision).

let bed: DomainTestbed;
beforeAll(async () => {
  // Mid-month, a Wednesday: 2026-11-18 10:00 UTC.
  bed = await createDomainTestbed({ clock: createFakeClock(new Date('2026-11-18T10:00:00Z')) });
});
afterAll(() => bed.close());

async function served(sub: { traffic_limit_bytes: number; renewal?: 'day' | 'month' }) {
  const { node, groups } = await servedNode(bed.ctx());
  return { node, sub: await fixtures(bed.ctx()).subscription({ access_group_ids: groups, ...sub }) };
}
const subRow = (id: string) => subscriptionsWithCounters(bed.deps.db).where('id', '=', id).executeTakeFirstOrThrow();
const revision = async (node: string) => (await revisionsOf(bed.ctx(), [node]))[node] ?? 0;
const systemAudits = (id: string) =>
  bed.deps.db.selectFrom('audit_log').selectAll().where('entity_id', '=', id).where('actor_type', '=', 'system').orderBy('at').execute();
let reportId = 1n;
const use = (nodeId: string, subId: string, bytes: number) =>
  ingestUsageReport(bed.deps, nodeId, {
    report_id: reportId++,
    entries: [{ subscription_id: subId, uplink_bytes: BigInt(bytes), downlink_bytes: 0n }],
  });

describe('periodStart: renewal boundaries in UTC', () => {
  it('day at midnight, week at Monday midnight (ISO), month on the 1st', () => {
    const at = new Date('2026-11-18T10:00:00Z'); // Wednesday
    expect(periodStart('day', at)?.toISOString()).toBe('2026-11-18T00:00:00.000Z');
    expect(periodStart('week', at)?.toISOString()).toBe('2026-11-16T00:00:00.000Z');
    expect(periodStart('week', new Date('2026-11-16T00:00:00Z'))?.toISOString()).toBe('2026-11-16T00:00:00.000Z');
    expect(periodStart('week', new Date('2026-11-22T23:59:59Z'))?.toISOString()).toBe('2026-11-16T00:00:00.000Z');
    expect(periodStart('month', at)?.toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(periodStart('month', new Date('2027-01-01T00:00:00Z'))?.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(periodStart('no_reset', at)).toBeNull();
  });
});

describe('limits written down by the system and pushed to the nodes', () => {
  it('usage reaching traffic_limit_bytes makes the subscription limited in the credit’s own unit: audited as the system, its node gets a new revision', async () => {
    const { node, sub } = await served({ traffic_limit_bytes: 1000 });
    expect((await use(node, sub.id, 999)).limited).toEqual([]);
    expect((await subRow(sub.id)).status).toBe('active');

    const before = await revision(node);
    expect((await use(node, sub.id, 1)).limited).toEqual([sub.id]);
    expect((await subRow(sub.id)).status).toBe('limited');
    expect(await revision(node)).toBe(before + 1);
    expect((await systemAudits(sub.id)).map((a) => [a.action, a.actor_id, (a.details as { reason?: string }).reason])).toEqual([
      ['subscription.limited', null, 'traffic limit reached'],
    ]);
    const events = await bed.deps.db
      .selectFrom('events')
      .select('type')
      .where(sql<boolean>`payload->>'subscription_id' = ${sub.id}`)
      .orderBy('id')
      .execute();
    expect(events.map((e) => e.type)).toEqual([
      'subscription.created',
      'subscription.traffic_80_percent',
      'subscription.traffic_100_percent',
      'subscription.limited',
    ]);
    // Written once: the sweep finds nothing left, and more usage writes nothing again.
    expect(await enforceTrafficLimits(bed.system())).toBe(0);
    expect((await use(node, sub.id, 5)).limited).toEqual([]);
    expect(await revision(node)).toBe(before + 1);
  });

  it('a credit reaching the limit of a subscription whose expiry has passed (stored active, the sweep not run yet) stores expired: the rule’s order', async () => {
    const { node, sub } = await served({ traffic_limit_bytes: 100 });
    await bed.deps.db
      .updateTable('subscriptions')
      .set({ expires_at: new Date(bed.clock.now().getTime() - 60_000) })
      .where('id', '=', sub.id)
      .execute();
    expect((await use(node, sub.id, 100)).limited).toEqual([sub.id]);
    expect((await subRow(sub.id)).status).toBe('expired');
    expect((await systemAudits(sub.id)).map((a) => a.action)).toEqual(['subscription.expired']);
  });

  it('the sweep writes down a limit that a write other than a credit left behind (a row still stored active past its limit)', async () => {
    const { node, sub } = await served({ traffic_limit_bytes: 1000 });
    await bed.deps.db.updateTable('subscription_counters').set({ used_bytes: 1000 }).where('subscription_id', '=', sub.id).execute();
    const before = await revision(node);
    expect(await enforceTrafficLimits(bed.system())).toBe(1);
    expect((await subRow(sub.id)).status).toBe('limited');
    expect(await revision(node)).toBe(before + 1);
    expect((await systemAudits(sub.id)).map((a) => a.action)).toEqual(['subscription.limited']);
    expect(await enforceTrafficLimits(bed.system())).toBe(0);
  });

  it('an update of the limit re-evaluates at once: raising it makes the subscription active again, lowering it below usage limits it', async () => {
    const { node, sub } = await served({ traffic_limit_bytes: 100 });
    await use(node, sub.id, 150);
    expect((await subRow(sub.id)).status).toBe('limited');
    const setLimit = (limit: number) =>
      updateSubscription(bed.ctx(), sub.id, parseInput(UpdateSubscriptionInput, { traffic_limit_bytes: limit }));
    expect((await setLimit(10_000)).status).toBe('active');
    expect((await subRow(sub.id)).status).toBe('active');
    expect((await setLimit(100)).status).toBe('limited');
  });

  it('renewal month: at the 1st (UTC) used traffic resets and a limited subscription is active again; pushed and audited', async () => {
    const monthly = await served({ traffic_limit_bytes: 500, renewal: 'month' });
    const daily = await served({ traffic_limit_bytes: 500, renewal: 'day' });
    const never = await served({ traffic_limit_bytes: 500 });
    for (const f of [monthly, daily, never]) await use(f.node, f.sub.id, 600);
    expect((await subRow(monthly.sub.id)).status).toBe('limited');

    // Still November: nothing to reset for the monthly one; the daily one resets at midnight.
    bed.clock.set(new Date('2026-11-19T00:00:01Z'));
    expect(await resetEndedPeriods(bed.system())).toBe(1);
    expect((await subRow(daily.sub.id)).status).toBe('active');
    expect((await subRow(monthly.sub.id)).status).toBe('limited');

    const before = await revision(monthly.node);
    bed.clock.set(new Date('2026-12-01T00:00:05Z'));
    expect(await resetEndedPeriods(bed.system())).toBe(2); // the monthly one and, a day later again, the daily one
    const row = await subRow(monthly.sub.id);
    expect([row.status, Number(row.used_bytes), row.period_started_at.toISOString()]).toEqual(['active', 0, '2026-12-01T00:00:00.000Z']);
    expect(Number(row.lifetime_used_bytes)).toBe(600);
    expect(await revision(monthly.node)).toBeGreaterThan(before);
    const audits = await systemAudits(monthly.sub.id);
    expect(audits.map((a) => a.action)).toEqual(['subscription.limited', 'subscription.period_reset']);
    expect(audits.at(-1)?.details).toMatchObject({ renewal: 'month', used_bytes: 600, status: { from: 'limited', to: 'active' } });
    // no_reset keeps its usage and its status.
    expect((await subRow(never.sub.id)).status).toBe('limited');
    expect(await resetEndedPeriods(bed.system())).toBe(0);
  });
});

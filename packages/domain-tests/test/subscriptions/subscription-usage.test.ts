import { getSubscriptionUsage, ingestUsageReport, type UsageQuery } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedNode } from '../customers-support.ts';

let bed: DomainTestbed;
let nodeA: string;
let nodeB: string;
/** Granted to every subscription here: both nodes serve them (a node is credited only for those). */
let groups: string[];
beforeAll(async () => {
  bed = await createDomainTestbed();
  const a = await servedNode(bed.ctx());
  const b = await servedNode(bed.ctx());
  nodeA = a.node;
  nodeB = b.node;
  groups = [...a.groups, ...b.groups];
});
afterAll(() => bed.close());

const reportIds = new Map<string, bigint>();
/** Traffic as a node's usage report credits it: to the UTC hour the report arrives in. */
async function usage(sub: string, node: string, hour: string, up: number, down: number) {
  const report_id = (reportIds.get(node) ?? 0n) + 1n;
  reportIds.set(node, report_id);
  bed.clock.set(new Date(hour));
  await ingestUsageReport(bed.deps, node, {
    report_id,
    entries: [{ subscription_id: sub, uplink_bytes: BigInt(up), downlink_bytes: BigInt(down) }],
  });
}
const at = (iso: string) => new Date(iso);
const read = (id: string, q: UsageQuery) => getSubscriptionUsage(bed.ctx(), id, q);

describe('getSubscriptionUsage: sums of the hourly usage per hour, day or month', () => {
  it('sums over nodes per hour, every hour in the range present, other subscriptions left out', async () => {
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups });
    const other = await fixtures(bed.ctx()).subscription({ access_group_ids: groups });
    await usage(sub.id, nodeA, '2026-03-01T10:00:00Z', 100, 1000);
    await usage(sub.id, nodeB, '2026-03-01T10:30:00Z', 5_000_000_000, 7);
    await usage(sub.id, nodeA, '2026-03-01T12:00:00Z', 1, 2);
    await usage(sub.id, nodeA, '2026-03-01T13:00:00Z', 9, 9); // outside: to is exclusive
    await usage(other.id, nodeA, '2026-03-01T10:00:00Z', 999, 999);
    expect(await read(sub.id, { from: at('2026-03-01T10:00:00Z'), to: at('2026-03-01T13:00:00Z') })).toEqual({
      subscription_id: sub.id,
      granularity: 'hour',
      from: '2026-03-01T10:00:00.000Z',
      to: '2026-03-01T13:00:00.000Z',
      items: [
        { start: '2026-03-01T10:00:00.000Z', uplink_bytes: 5_000_000_100, downlink_bytes: 1007 },
        { start: '2026-03-01T11:00:00.000Z', uplink_bytes: 0, downlink_bytes: 0 },
        { start: '2026-03-01T12:00:00.000Z', uplink_bytes: 1, downlink_bytes: 2 },
      ],
    });
  });

  it('granularity day sums whole UTC days; from is rounded down and to up', async () => {
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups });
    await usage(sub.id, nodeA, '2026-03-01T00:00:00Z', 1, 10);
    await usage(sub.id, nodeA, '2026-03-01T23:00:00Z', 2, 20);
    await usage(sub.id, nodeB, '2026-03-02T05:00:00Z', 4, 40);
    const res = await read(sub.id, { granularity: 'day', from: at('2026-03-01T06:30:00Z'), to: at('2026-03-02T01:00:00Z') });
    expect(res.from).toBe('2026-03-01T00:00:00.000Z');
    expect(res.to).toBe('2026-03-03T00:00:00.000Z');
    expect(res.items).toEqual([
      { start: '2026-03-01T00:00:00.000Z', uplink_bytes: 3, downlink_bytes: 30 },
      { start: '2026-03-02T00:00:00.000Z', uplink_bytes: 4, downlink_bytes: 40 },
    ]);
  });

  it('granularity month sums UTC calendar months (28 to 31 days) over their boundaries; from rounded down, to up', async () => {
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups });
    await usage(sub.id, nodeA, '2026-01-01T00:00:00Z', 1, 10);
    await usage(sub.id, nodeB, '2026-01-31T23:00:00Z', 2, 20);
    await usage(sub.id, nodeA, '2026-02-01T00:00:00Z', 4, 40);
    await usage(sub.id, nodeA, '2026-02-28T23:00:00Z', 8, 80);
    await usage(sub.id, nodeA, '2026-03-01T00:00:00Z', 16, 160);
    await usage(sub.id, nodeA, '2026-04-01T00:00:00Z', 32, 320); // outside: to rounds up to April 1st
    const res = await read(sub.id, { granularity: 'month', from: at('2026-01-15T10:00:00Z'), to: at('2026-03-20T00:00:00Z') });
    expect(res.granularity).toBe('month');
    expect(res.from).toBe('2026-01-01T00:00:00.000Z');
    expect(res.to).toBe('2026-04-01T00:00:00.000Z');
    expect(res.items).toEqual([
      { start: '2026-01-01T00:00:00.000Z', uplink_bytes: 3, downlink_bytes: 30 },
      { start: '2026-02-01T00:00:00.000Z', uplink_bytes: 12, downlink_bytes: 120 },
      { start: '2026-03-01T00:00:00.000Z', uplink_bytes: 16, downlink_bytes: 160 },
    ]);
    const exact = await read(sub.id, { granularity: 'month', from: at('2026-02-01T00:00:00Z'), to: at('2026-03-01T00:00:00Z') });
    expect(exact.items).toEqual([{ start: '2026-02-01T00:00:00.000Z', uplink_bytes: 12, downlink_bytes: 120 }]);
    const decade = await read(sub.id, { granularity: 'month', from: at('2020-01-01T00:00:00Z'), to: at('2029-12-31T00:00:00Z') });
    expect(decade.items).toHaveLength(120);
  });

  it('defaults: hour granularity over the 24 hours before now', async () => {
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups });
    const res = await read(sub.id, {});
    expect(res.granularity).toBe('hour');
    expect(res.items.length).toBeGreaterThanOrEqual(24);
    expect(res.items.length).toBeLessThanOrEqual(25);
  });

  it('the range: from before to, at most 31 days of hours, 366 of days, 10 years of months; an unknown subscription is not found', async () => {
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups });
    const refused = (q: UsageQuery, field: string) =>
      expect(read(sub.id, q)).rejects.toMatchObject({ type: 'validation', errors: { [field]: expect.any(String) } });
    await refused({ from: at('2026-03-02T00:00:00Z'), to: at('2026-03-01T00:00:00Z') }, 'query.from');
    await refused({ from: at('2026-03-01T00:00:00Z'), to: at('2026-03-01T00:00:00Z') }, 'query.from');
    await refused({ from: at('2026-01-01T00:00:00Z'), to: at('2026-02-01T00:00:01Z') }, 'query.to');
    await refused({ granularity: 'day', from: at('2025-01-01T00:00:00Z'), to: at('2026-01-02T00:00:01Z') }, 'query.to');
    await refused({ granularity: 'month', from: at('2016-01-01T00:00:00Z'), to: at('2026-03-01T00:00:00Z') }, 'query.to');
    const max = await read(sub.id, { from: at('2026-01-01T00:00:00Z'), to: at('2026-02-01T00:00:00Z') });
    expect(max.items).toHaveLength(31 * 24);
    expect(
      (await read(sub.id, { granularity: 'day', from: at('2026-01-01T00:00:00Z'), to: at('2026-02-01T00:00:01Z') })).items,
    ).toHaveLength(32);
    await expect(read('sub_doesnotexist', {})).rejects.toMatchObject({ type: 'not-found' });
  });
});

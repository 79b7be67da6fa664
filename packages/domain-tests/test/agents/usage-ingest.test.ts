import { ingestUsageReport, JOBS } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedNode } from '../customers-support.ts';

// The usage ingest decides what a report changes and what it causes; the gateway only decodes
// it and acknowledges (spec 4.1 rule 3).

let bed: DomainTestbed;
let handed: string[][];
let stopConsuming: () => Promise<void>;
beforeAll(async () => {
  bed = await createDomainTestbed();
  handed = [];
  stopConsuming = await bed.deps.jobs.consume(JOBS.enforceLimits, async ({ ids }) => {
    handed.push(ids);
  });
});
afterAll(async () => {
  await stopConsuming();
  await bed.close();
});

const row = (id: string) => bed.deps.db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const entry = (subscription_id: string, up: number, down = 0) => ({
  subscription_id,
  uplink_bytes: BigInt(up),
  downlink_bytes: BigInt(down),
});
/** Waits until a job was handed over (in-process or through Redis), or a while for none to come. */
const handedWithin = async (ms: number) => {
  for (const end = Date.now() + ms; handed.length === 0 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
  return handed;
};

describe('ingestUsageReport: exactly once per node by report_id, and what a report causes', () => {
  it('a report that brings an active subscription to its limit hands it to the worker after commit (subscriptions.enforce-limits)', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const f = fixtures(bed.ctx());
    const capped = await f.subscription({ access_group_ids: groups, traffic_limit_bytes: 1000 });
    const roomy = await f.subscription({ access_group_ids: groups, traffic_limit_bytes: 1_000_000 });
    handed.length = 0;
    const result = await ingestUsageReport(bed.deps, node, { report_id: 1n, entries: [entry(capped.id, 600, 400), entry(roomy.id, 10)] });
    expect(result).toMatchObject({ applied: true, accepted: 2, dropped: 0, limit_candidates: [capped.id] });
    expect(await handedWithin(5000)).toEqual([[capped.id]]);
    // The ingest only hands it on: the status rule is the worker's (enforceTrafficLimits).
    expect((await row(capped.id)).status).toBe('active');
    expect(Number((await row(capped.id)).used_bytes)).toBe(1000);
  });

  it('a replayed or older report_id changes nothing and hands nothing on, yet is reported for acknowledgement', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups, traffic_limit_bytes: 100 });
    handed.length = 0;
    await ingestUsageReport(bed.deps, node, { report_id: 7n, entries: [entry(sub.id, 150)] });
    expect(await handedWithin(5000)).toEqual([[sub.id]]);
    handed.length = 0;
    for (const report_id of [7n, 6n]) {
      const again = await ingestUsageReport(bed.deps, node, { report_id, entries: [entry(sub.id, 150)] });
      expect(again).toEqual({ report_id, applied: false, accepted: 0, dropped: 0, limit_candidates: [] });
    }
    expect(await handedWithin(300)).toEqual([]);
    expect(Number((await row(sub.id)).used_bytes)).toBe(150);
  });

  it('entries for unknown subscriptions and absurd deltas are dropped and counted on the node; the report still applies', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups });
    const result = await ingestUsageReport(bed.deps, node, {
      report_id: 1n,
      entries: [entry(sub.id, 5, 5), entry('sub_gone', 10), { subscription_id: sub.id, uplink_bytes: -1n, downlink_bytes: 0n }],
    });
    expect(result).toMatchObject({ applied: true, accepted: 1, dropped: 2 });
    const nodeRow = await bed.deps.db
      .selectFrom('nodes')
      .select(['usage_entries_dropped', 'last_usage_report_id'])
      .where('id', '=', node)
      .executeTakeFirstOrThrow();
    expect(Number(nodeRow.usage_entries_dropped)).toBe(2);
    expect(String(nodeRow.last_usage_report_id)).toBe('1');
    expect(Number((await row(sub.id)).used_bytes)).toBe(10);
  });
});

import { ingestUsageReport, JOBS } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, type Fixtures, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker } from '../src/worker.ts';

// The worker over a real runtime (queue in process, or BullMQ when REDIS_URL is set): jobs
// reach the domain verbs as the system. What each verb decides (which subscriptions, which
// nodes, the audit) is proven on the use cases in packages/domain-tests/test/subscriptions.

let bed: DomainTestbed;
let make: Fixtures;
beforeAll(async () => {
  bed = await createDomainTestbed();
  make = fixtures(bed.ctx());
});
afterAll(() => bed.close());

const statusOf = async (id: string) =>
  (await bed.deps.db.selectFrom('subscriptions').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;

/** Runs the worker until `done` or 5 s. */
async function runWorkerUntil(done: () => Promise<boolean>, sweepEveryMs: number) {
  const worker = createWorker(bed.runtime, { sweepEveryMs });
  await worker.start();
  try {
    for (let i = 0; i < 250 && !(await done()); i++) await new Promise((r) => setTimeout(r, 20));
  } finally {
    await worker.stop();
  }
}

/** Usage over the limit whose hand-over to the worker is swallowed first: only the scheduled sweep can find it. */
async function overLimitUnannounced(): Promise<string> {
  const { node, group } = await make.servingNode();
  const { id } = await make.subscription({ traffic_limit_bytes: 10, access_group_ids: [group.id] });
  const swallowed: unknown[] = [];
  const stop = await bed.deps.jobs.consume(JOBS.enforceLimits, async (data) => {
    swallowed.push(data);
  });
  await ingestUsageReport(bed.deps, node.id, { report_id: 1n, entries: [{ subscription_id: id, uplink_bytes: 20n, downlink_bytes: 0n }] });
  for (let i = 0; i < 250 && swallowed.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  await stop();
  expect(swallowed).toEqual([{ ids: [id] }]);
  expect(await statusOf(id)).toBe('active');
  return id;
}

describe("the worker's scheduled sweep, as the system", () => {
  it('writes down a traffic limit that no job announced', async () => {
    const id = await overLimitUnannounced();
    await runWorkerUntil(async () => (await statusOf(id)) === 'limited', 20);
    expect(await statusOf(id)).toBe('limited');
  });

  it('writes down an expiry by time, audited once as the system', async () => {
    const sub = await make.subscription({ expires_at: new Date(bed.clock.now().getTime() + 60_000) });
    bed.clock.advance(61_000);
    await runWorkerUntil(async () => (await statusOf(sub.id)) === 'expired', 20);
    expect(await statusOf(sub.id)).toBe('expired');
    const audit = await bed.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('entity_id', '=', sub.id)
      .where('action', '=', 'subscription.expired')
      .execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]?.actor_type).toBe('system');
  });
});

describe('subscriptions.enforce-limits, handed over by the usage ingest', () => {
  it('limits the subscription at once, long before the next sweep', async () => {
    const { node, group } = await make.servingNode();
    const { id } = await make.subscription({ traffic_limit_bytes: 10, access_group_ids: [group.id] });
    const worker = createWorker(bed.runtime, { sweepEveryMs: 3_600_000 });
    await worker.start();
    try {
      await ingestUsageReport(bed.deps, node.id, {
        report_id: 1n,
        entries: [{ subscription_id: id, uplink_bytes: 20n, downlink_bytes: 0n }],
      });
      for (let i = 0; i < 250 && (await statusOf(id)) !== 'limited'; i++) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await worker.stop();
    }
    expect(await statusOf(id)).toBe('limited');
  });
});

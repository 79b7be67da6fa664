import { JOBS } from '@svc/domain';
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

/**
 * A subscription stored active past its limit, as no product write leaves one (the credit that
 * reaches a limit stores it; packages/domain-tests/test/subscriptions/traffic-limits.test.ts):
 * its counters written behind the status's back, so only a sweep or the job can find it.
 */
async function overLimitUnannounced(): Promise<string> {
  const { group } = await make.servingNode();
  const { id } = await make.subscription({ traffic_limit_bytes: 10, access_group_ids: [group.id] });
  await bed.deps.db.updateTable('subscription_counters').set({ used_bytes: 20 }).where('subscription_id', '=', id).execute();
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

describe('subscriptions.enforce-limits, handed over by a usage credit that found the row held', () => {
  it('limits the subscription at once, long before the next sweep', async () => {
    const id = await overLimitUnannounced();
    const worker = createWorker(bed.runtime, { sweepEveryMs: 3_600_000 });
    await worker.start();
    try {
      await bed.deps.jobs.enqueue(JOBS.enforceLimits, { ids: [id] });
      for (let i = 0; i < 250 && (await statusOf(id)) !== 'limited'; i++) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await worker.stop();
    }
    expect(await statusOf(id)).toBe('limited');
  });
});

import { ingestUsageReport, withActor } from '@svc/domain';
import { type Fixtures, fixtures, setupOwner, TEST_OWNER, type TestServer } from '@svc/testkit';
import { createWorker } from '@svc/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// The worker's scheduled sweep over a running deployment: nobody asks, and what is due is
// written down. What each sweep decides (which subscriptions, which nodes, the audit) is
// proven on the use cases in packages/domain-tests/test/subscriptions; this is here because
// the worker has no test harness of its own and this one gives a runtime to run it in.

let s: TestServer;
let make: Fixtures;
beforeAll(async () => {
  s = await startAdminApi();
  await setupOwner(s);
  make = fixtures(withActor(s.deps, TEST_OWNER));
});
afterAll(() => s.stop());

const statusOf = async (id: string) =>
  (await s.deps.db.selectFrom('subscriptions').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;

/** Runs the worker, sweeping every 20 ms, until `done` or 2 s. */
async function sweepUntil(done: () => Promise<boolean>) {
  const { start, stop } = createWorker(s.runtime, { sweepEveryMs: 20 });
  await start();
  try {
    for (let i = 0; i < 100 && !(await done()); i++) await new Promise((r) => setTimeout(r, 20));
  } finally {
    await stop();
  }
}

describe("the worker's scheduled sweep, as the system", () => {
  it('writes down a traffic limit reached without anyone asking', async () => {
    const node = await make.node();
    const sub = await make.subscription({ traffic_limit_bytes: 10 });
    await ingestUsageReport(s.deps, node.id, {
      report_id: 1n,
      entries: [{ subscription_id: sub.id, uplink_bytes: 20n, downlink_bytes: 0n }],
    });
    await sweepUntil(async () => (await statusOf(sub.id)) === 'limited');
    expect(await statusOf(sub.id)).toBe('limited');
  });

  it('writes down an expiry by time, audited once as the system', async () => {
    const sub = await make.subscription({ expires_at: new Date(s.clock.now().getTime() + 60_000) });
    s.clock.advance(61_000);
    await sweepUntil(async () => (await statusOf(sub.id)) === 'expired');
    expect(await statusOf(sub.id)).toBe('expired');
    const audit = await s.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('entity_id', '=', sub.id)
      .where('action', '=', 'subscription.expired')
      .execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]?.actor_type).toBe('system');
  });
});

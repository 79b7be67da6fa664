// `pnpm bench:bulk` (embedded PGlite) and `DATABASE_URL=… pnpm bench:bulk` (PostgreSQL): a bulk
// action over BENCH_SUBSCRIPTIONS (10,000) subscriptions on two nodes, as the job runs it
// (POST /api/v1/subscriptions/bulk over HTTP, then the worker's bulk.run handler: runBulkJob),
// against the same change as single PATCH /api/v1/subscriptions/{id}, 16 at a time over HTTP,
// to as many other subscriptions, in the same run. Two changes: an expiry extended by 30 days
// (reaches no node) and the status set to disabled (every subscription leaves its node): the
// rate of each, and the node revisions each way cost. Appends to bench/BENCHMARKS.md
// (BENCH_NO_APPEND=1: print only).
import { mountAdminApi } from '@svc/admin-api';
import { runBulkJob, SYSTEM, withActor } from '@svc/domain';
import { cloneSubscriptions, fixtures, login, OWNER, setupOwner, startTestServer, uniqueName } from '@svc/testkit';
import { env, loadNow, log, machine, main, n, publish, quietMachine, revision } from '../common/run.ts';

const N = env('BENCH_SUBSCRIPTIONS', 10_000);
const CONCURRENCY = 16;
const DAY = 86_400_000;

await main(async () => {
  const before = await quietMachine();
  const s = await startTestServer({ mount: mountAdminApi });
  try {
    await setupOwner(s);
    const token = (await login(s, OWNER.email, OWNER.password)).access_token;
    const f = fixtures(withActor(s.deps, SYSTEM));
    const [a, b] = [await f.servingNode(), await f.servingNode()];
    const client = await f.client();
    const expires = new Date(s.clock.now().getTime() + DAY);
    /** N subscriptions noted `note`, half on each node. */
    const population = async () => {
      const note = uniqueName('bench');
      const ids: string[] = [];
      for (const node of [a, b]) {
        const t = await f.subscription({ client_id: client.id, access_group_ids: [node.group.id], expires_at: expires, note });
        ids.push(t.id, ...(await cloneSubscriptions(s.deps.db, t.id, N / 2 - 1)));
      }
      return { note, ids };
    };
    const revisions = async () =>
      (await s.deps.db.selectFrom('nodes').select('desired_revision').where('id', 'in', [a.node.id, b.node.id]).execute()).reduce(
        (sum, r) => sum + Number(r.desired_revision),
        0,
      );

    const bulk = async (action: Record<string, unknown>) => {
      const { note } = await population();
      const r0 = await revisions();
      const t = performance.now();
      const res = await s.api.post('/api/v1/subscriptions/bulk', { filter: { q: note }, action }, { token });
      if (res.status !== 202) throw new Error(res.text);
      const job = await runBulkJob(s.deps, res.body.id);
      const seconds = (performance.now() - t) / 1000;
      if (job?.done !== N) throw new Error(`bulk job: ${JSON.stringify(job)}`);
      return { seconds, rate: N / seconds, revisions: (await revisions()) - r0 };
    };
    const patches = async (body: (id: string) => Record<string, unknown>) => {
      const { ids } = await population();
      const r0 = await revisions();
      const t = performance.now();
      let next = 0;
      let failures = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < ids.length) {
            const id = ids[next++] as string;
            const res = await s.api.patch(`/api/v1/subscriptions/${id}`, body(id), { token });
            if (res.status !== 200) failures++;
          }
        }),
      );
      const seconds = (performance.now() - t) / 1000;
      return { seconds, rate: N / seconds, revisions: (await revisions()) - r0, failures };
    };

    log(`bulk extend of ${n(N)}`);
    const extendBulk = await bulk({ type: 'extend_expiry', days: 30 });
    log(`single PATCHes of expires_at, ${n(N)}`);
    const extendPatch = await patches(() => ({ expires_at: new Date(expires.getTime() + 30 * DAY).toISOString() }));
    log(`bulk disable of ${n(N)}`);
    const disableBulk = await bulk({ type: 'set_status', status: 'disabled' });
    log(`single PATCHes of status, ${n(N)}`);
    const disablePatch = await patches(() => ({ status: 'disabled' }));

    const where = process.env.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : 'embedded PGlite';
    const row = (what: string, r: { seconds: number; rate: number; revisions: number; failures?: number }) =>
      `| ${what} | ${r.seconds.toFixed(1)} | ${n(r.rate)}/s | ${n(r.revisions)}${r.failures ? ` (failures: ${r.failures})` : ''} |`;
    publish([
      `### ${new Date().toISOString().slice(0, 10)} — bulk actions, ${n(N)} subscriptions on 2 nodes, ${where}`,
      '',
      `Machine: ${machine()}. Commit ${revision()}. Load average (1/5/15 min) before: ${before}; after: ${loadNow()}.`,
      '',
      '| change | seconds | subscriptions per second | node revisions |',
      '|---|---|---|---|',
      row(`bulk job: extend expiry 30 days (POST /subscriptions/bulk + bulk.run, chunks of 500)`, extendBulk),
      row(`baseline: PATCH expires_at one by one, ${CONCURRENCY} at a time`, extendPatch),
      row('bulk job: set status disabled', disableBulk),
      row(`baseline: PATCH status one by one, ${CONCURRENCY} at a time`, disablePatch),
    ]);
  } finally {
    await s.stop();
  }
});

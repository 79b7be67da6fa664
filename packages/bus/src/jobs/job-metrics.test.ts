import { randomBytes } from 'node:crypto';
import { JOBS } from '@svc/domain';
import type { JobOutcome, QueueDepth } from '@svc/metrics';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createBullJobQueue } from './bullmq-jobs.ts';
import { createMemoryJobQueue, type JobQueueObservers } from './memory-jobs.ts';

// What both queues tell the metrics (svc_jobs_total, svc_job_duration_seconds,
// svc_job_queue_depth): every run's outcome, and the jobs waiting.

const redisUrl = process.env.REDIS_URL;
const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {});
});

type Queue = ReturnType<typeof createMemoryJobQueue>;
const adapters: Array<{ name: string; skip: boolean; create: (o: JobQueueObservers) => Queue }> = [
  {
    name: 'in-process queue',
    skip: false,
    create: (o) => {
      const q = createMemoryJobQueue(o);
      closers.push(() => q.close());
      return q;
    },
  },
  {
    name: 'BullMQ over Redis',
    skip: !redisUrl,
    create: (o) => {
      const redis = new Redis(redisUrl as string, { maxRetriesPerRequest: 3 });
      const q = createBullJobQueue(redis, `svc-test:job-metrics:${randomBytes(6).toString('hex')}:`, o);
      closers.push(async () => {
        await q.close();
        await redis.quit().catch(() => redis.disconnect());
      });
      return q;
    },
  },
];

const until = async (check: () => boolean | Promise<boolean>, timeoutMs = 15_000) => {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

const depthOf = (depths: QueueDepth[], job: string, state: QueueDepth['state']) =>
  depths.find((d) => d.job === job && d.state === state)?.count ?? 0;

for (const a of adapters) {
  describe.skipIf(a.skip)(a.name, () => {
    it('jobs enqueued before a consumer are counted waiting; each run reports its outcome and time', async () => {
      const runs: Array<{ name: string; outcome: JobOutcome; seconds: number }> = [];
      const q = a.create({ onRun: (name, outcome, seconds) => runs.push({ name, outcome, seconds }) });
      await q.enqueue(JOBS.enforceLimits, { ids: ['sub_a'] });
      await q.enqueue(JOBS.enforceLimits, { ids: ['sub_b'] });
      expect(depthOf(await q.depths(), JOBS.enforceLimits, 'waiting')).toBe(2);
      let calls = 0;
      const stop = await q.consume(JOBS.enforceLimits, async () => {
        calls++;
        if (calls === 1) throw new Error('database away');
      });
      await until(() => runs.filter((r) => r.outcome === 'completed').length === 2);
      expect(runs.map((r) => [r.name, r.outcome])).toEqual([
        [JOBS.enforceLimits, 'retried'],
        [JOBS.enforceLimits, 'completed'],
        [JOBS.enforceLimits, 'completed'],
      ]);
      for (const r of runs) expect(r.seconds).toBeGreaterThanOrEqual(0);
      await until(async () => depthOf(await q.depths(), JOBS.enforceLimits, 'waiting') === 0);
      expect(depthOf(await q.depths(), JOBS.enforceLimits, 'delayed')).toBe(0);
      await stop();
    });
  });
}

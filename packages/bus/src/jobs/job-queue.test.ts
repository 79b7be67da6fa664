import { randomBytes } from 'node:crypto';
import { JOBS, type JobQueue } from '@svc/domain';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createBullJobQueue } from './bullmq-jobs.ts';
import { createMemoryJobQueue } from './memory-jobs.ts';

/** One behavioural suite for both queues: what the worker and the gateway rely on. */
const redisUrl = process.env.REDIS_URL;
const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {});
});

type Closable = JobQueue & { close(): Promise<void> };
const queues: Array<{ name: string; skip: boolean; create: (failures?: string[]) => [Closable, Closable] }> = [
  {
    name: 'in-process queue',
    skip: false,
    create: (failures) => {
      const q = createMemoryJobQueue({ onFailure: (name) => failures?.push(name) });
      closers.push(() => q.close());
      return [q, q];
    },
  },
  {
    name: 'BullMQ over Redis (producer and worker in two processes: separate connections, one prefix)',
    skip: !redisUrl,
    create: (failures) => {
      const prefix = `svc-test:jobs:${randomBytes(6).toString('hex')}:`;
      const make = () => {
        const redis = new Redis(redisUrl as string, { maxRetriesPerRequest: 3 });
        const q = createBullJobQueue(redis, prefix, { onFailure: (name) => failures?.push(name) });
        closers.push(async () => {
          await q.close();
          await redis.quit().catch(() => redis.disconnect());
        });
        return q;
      };
      return [make(), make()];
    },
  },
];

const until = async (check: () => boolean, timeoutMs = 10_000) => {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

for (const q of queues) {
  describe.skipIf(q.skip)(q.name, () => {
    it('a job enqueued by one process runs once in the consuming one, with its data; jobs enqueued before the consumer wait for it', async () => {
      const [producer, worker] = q.create();
      await producer.enqueue(JOBS.enforceLimits, { ids: ['sub_early'] });
      const seen: string[][] = [];
      const stop = await worker.consume(JOBS.enforceLimits, async ({ ids }) => {
        seen.push(ids);
      });
      await producer.enqueue(JOBS.enforceLimits, { ids: ['sub_a', 'sub_b'] });
      await until(() => seen.length === 2);
      await new Promise((r) => setTimeout(r, 100));
      expect(seen).toEqual([['sub_early'], ['sub_a', 'sub_b']]);
      await stop();
    });

    it('a failing job is retried until it succeeds (handlers are idempotent)', async () => {
      const [producer, worker] = q.create();
      let calls = 0;
      const stop = await worker.consume(JOBS.enforceLimits, async () => {
        calls++;
        if (calls < 2) throw new Error('database away');
      });
      await producer.enqueue(JOBS.enforceLimits, { ids: ['sub_retry'] });
      await until(() => calls >= 2, 15_000);
      expect(calls).toBe(2);
      await stop();
    });

    it('a schedule runs the job repeatedly; two replicas scheduling the same job make one schedule, not two', async () => {
      const [a, b] = q.create();
      let runs = 0;
      const stop = await b.consume(JOBS.subscriptionsSweep, async () => {
        runs++;
      });
      await a.schedule(JOBS.subscriptionsSweep, 200, {});
      await b.schedule(JOBS.subscriptionsSweep, 200, {});
      await new Promise((r) => setTimeout(r, 1100));
      await stop();
      // ~5 runs for one 200 ms schedule in 1.1 s (two schedules would give ~10).
      expect(runs).toBeGreaterThanOrEqual(3);
      expect(runs).toBeLessThanOrEqual(7);
    });
  });
}

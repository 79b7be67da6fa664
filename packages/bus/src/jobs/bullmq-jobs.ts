import { JOBS, type JobData, type JobName, type JobQueue } from '@svc/domain';
import type { QueueDepth } from '@svc/metrics';
import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { JobQueueObservers } from './memory-jobs.ts';

const ATTEMPTS = 5;

/**
 * Jobs over Redis with BullMQ (split mode): one BullMQ queue per job name under
 * `<key prefix>bull`, so installations sharing a Redis keep apart. A job is retried with
 * exponential backoff (1 s, 2 s, ...) up to 5 attempts; completed jobs are not kept, the last
 * 1,000 failed ones are. A scheduled job is a BullMQ job scheduler: one entry per name, so
 * several replicas calling schedule() make one schedule; it is written again whenever the
 * connection comes back (a Redis restarted empty has none).
 */
export function createBullJobQueue(
  connection: Redis,
  keyPrefix: string,
  opts: JobQueueObservers = {},
): JobQueue & { close(): Promise<void>; depths(): Promise<QueueDepth[]> } {
  const prefix = `${keyPrefix}bull`;
  const queues = new Map<JobName, Queue>();
  const workers = new Map<Worker, Redis>();
  // A Redis restarted without persistence (or failed over to an empty replica) has lost its
  // job schedulers, and nothing else writes them: the sweeps would stop for good until the
  // worker restarts. So on every reconnect the schedules this process made are upserted
  // again (one entry per name: idempotent when Redis kept them; one that fails is tried
  // again at the next reconnect, and the worker's restart writes them all).
  const schedules = new Map<JobName, { everyMs: number; data: unknown }>();
  let connectedOnce = connection.status === 'ready';
  const reassert = () => {
    if (!connectedOnce) {
      connectedOnce = true;
      return;
    }
    for (const [name, s] of schedules)
      queue(name)
        .upsertJobScheduler(name, { every: s.everyMs }, { name, data: s.data })
        .catch(() => {});
  };
  connection.on('ready', reassert);
  // Workers block on their connection: each gets its own, with BullMQ's required settings.
  const workerConnection = () => connection.duplicate({ maxRetriesPerRequest: null, enableReadyCheck: false });

  const queue = (name: JobName): Queue => {
    let q = queues.get(name);
    if (!q) {
      q = new Queue(name, {
        connection,
        prefix,
        defaultJobOptions: {
          attempts: ATTEMPTS,
          backoff: { type: 'exponential', delay: 1000 },
          removeOnComplete: true,
          removeOnFail: 1000,
        },
      });
      queues.set(name, q);
    }
    return q;
  };

  return {
    async enqueue(name, data, o) {
      // BullMQ job ids may not contain ':'.
      await queue(name).add(name, data, o?.id ? { jobId: o.id.replaceAll(':', '_') } : {});
    },
    async schedule(name, everyMs, data) {
      schedules.set(name, { everyMs, data });
      await queue(name).upsertJobScheduler(name, { every: everyMs }, { name, data });
    },
    async consume<N extends JobName>(name: N, handler: (data: JobData[N]) => Promise<void>, o?: { concurrency?: number }) {
      const own = workerConnection();
      const worker = new Worker(name, async (job) => handler(job.data as JobData[N]), {
        connection: own,
        prefix,
        concurrency: o?.concurrency ?? 1,
      });
      const seconds = (job: { processedOn?: number | undefined; finishedOn?: number | undefined }) =>
        job.processedOn && job.finishedOn ? Math.max(0, job.finishedOn - job.processedOn) / 1000 : 0;
      worker.on('completed', (job) => opts.onRun?.(name, 'completed', seconds(job)));
      worker.on('failed', (job, err) => {
        if (!job) return;
        const final = job.attemptsMade >= ATTEMPTS;
        opts.onRun?.(name, final ? 'failed' : 'retried', seconds(job));
        if (final) opts.onFailure?.(name, err);
      });
      worker.on('error', () => {
        // Connection trouble: BullMQ reconnects; nothing to do here.
      });
      await worker.waitUntilReady();
      workers.set(worker, own);
      return async () => {
        if (!workers.delete(worker)) return;
        await worker.close();
        await own.quit().catch(() => own.disconnect());
      };
    },
    async depths() {
      // Every job's queue, whether this process enqueues it or not: one round trip each.
      const names = Object.values(JOBS) as JobName[];
      const counts = await Promise.all(
        names.map((n) => queue(n).getJobCounts('waiting', 'prioritized', 'paused', 'active', 'delayed', 'failed')),
      );
      return names.flatMap((job, i): QueueDepth[] => {
        const c = counts[i] ?? {};
        return [
          { job, state: 'waiting', count: (c.waiting ?? 0) + (c.prioritized ?? 0) + (c.paused ?? 0) },
          { job, state: 'active', count: c.active ?? 0 },
          { job, state: 'delayed', count: c.delayed ?? 0 },
          { job, state: 'failed', count: c.failed ?? 0 },
        ];
      });
    },
    async close() {
      connection.off('ready', reassert);
      const all = [...workers];
      workers.clear();
      await Promise.all(all.map(([w]) => w.close()));
      await Promise.all(all.map(([, c]) => c.quit().catch(() => c.disconnect())));
      await Promise.all([...queues.values()].map((q) => q.close()));
      queues.clear();
    },
  };
}

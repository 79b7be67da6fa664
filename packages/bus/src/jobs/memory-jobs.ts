import type { JobData, JobName, JobQueue } from '@svc/domain';
import type { JobOutcome, QueueDepth } from '@svc/metrics';

const ATTEMPTS = 5;
const BACKOFF_MS = 1000;

interface Pending {
  name: JobName;
  wire: string;
  id?: string | undefined;
  attempt: number;
}

/** What the queues tell of their jobs: each run's outcome and time, and a job given up on. */
export interface JobQueueObservers {
  /** A job failed its last attempt (logged by the runtime). */
  onFailure?: (name: string, err: unknown) => void;
  /** A run ended (svc_jobs_total, svc_job_duration_seconds). */
  onRun?: (name: string, outcome: JobOutcome, seconds: number) => void;
}

/**
 * Jobs inside one process (all-in-one mode). Data goes through JSON as it would through
 * Redis; a failed job runs again after 1 s, 2 s, 4 s ... up to 5 attempts (then it is logged
 * by `onFailure` and dropped, as BullMQ would keep it failed). Jobs enqueued before a consumer
 * exists wait for it. A scheduled job runs at once and then on an unref'd timer, one per name.
 */
export function createMemoryJobQueue(opts: JobQueueObservers = {}): JobQueue & { close(): Promise<void>; depths(): Promise<QueueDepth[]> } {
  const handlers = new Map<JobName, { run: (data: never) => Promise<void>; concurrency: number; running: number }>();
  const waiting = new Map<JobName, Pending[]>();
  const waitingIds = new Set<string>();
  const timers = new Set<NodeJS.Timeout>();
  const schedules = new Map<JobName, NodeJS.Timeout>();
  /** Jobs waiting for their retry's backoff, by name. */
  const delayed = new Map<JobName, number>();
  const addDelayed = (name: JobName, n: number) => delayed.set(name, (delayed.get(name) ?? 0) + n);
  let closed = false;

  const pump = (name: JobName) => {
    const h = handlers.get(name);
    const queue = waiting.get(name);
    while (h && queue && queue.length > 0 && h.running < h.concurrency && !closed) {
      const job = queue.shift() as Pending;
      if (job.id) waitingIds.delete(`${name}:${job.id}`);
      h.running++;
      setImmediate(async () => {
        const started = performance.now();
        const ran = (outcome: JobOutcome) => opts.onRun?.(name, outcome, (performance.now() - started) / 1000);
        try {
          await h.run(JSON.parse(job.wire) as never);
          ran('completed');
        } catch (err) {
          if (job.attempt + 1 < ATTEMPTS && !closed) {
            ran('retried');
            addDelayed(name, 1);
            const t = setTimeout(
              () => {
                timers.delete(t);
                addDelayed(name, -1);
                push({ ...job, attempt: job.attempt + 1 });
              },
              BACKOFF_MS * 2 ** job.attempt,
            );
            t.unref();
            timers.add(t);
          } else {
            ran('failed');
            opts.onFailure?.(name, err);
          }
        } finally {
          h.running--;
          pump(name);
        }
      });
    }
  };

  const push = (job: Pending) => {
    if (closed) return;
    if (job.id) {
      const key = `${job.name}:${job.id}`;
      if (waitingIds.has(key)) return;
      waitingIds.add(key);
    }
    let queue = waiting.get(job.name);
    if (!queue) {
      queue = [];
      waiting.set(job.name, queue);
    }
    queue.push(job);
    pump(job.name);
  };

  return {
    async enqueue(name, data, o) {
      push({ name, wire: JSON.stringify(data), id: o?.id, attempt: 0 });
    },
    async schedule(name, everyMs, data) {
      // One schedule per name, as BullMQ's job schedulers: scheduling again replaces it.
      const previous = schedules.get(name);
      if (previous) {
        clearInterval(previous);
        timers.delete(previous);
      }
      const t = setInterval(() => push({ name, wire: JSON.stringify(data), id: 'scheduled', attempt: 0 }), everyMs);
      t.unref();
      timers.add(t);
      schedules.set(name, t);
      if (!previous) push({ name, wire: JSON.stringify(data), id: 'scheduled', attempt: 0 });
    },
    async consume<N extends JobName>(name: N, handler: (data: JobData[N]) => Promise<void>, o?: { concurrency?: number }) {
      if (handlers.has(name)) throw new Error(`jobs ${name} already consumed in this process`);
      handlers.set(name, { run: handler as (data: never) => Promise<void>, concurrency: o?.concurrency ?? 1, running: 0 });
      pump(name);
      return async () => {
        handlers.delete(name);
      };
    },
    async depths() {
      const out: QueueDepth[] = [];
      const names = new Set<JobName>([...waiting.keys(), ...handlers.keys(), ...delayed.keys()]);
      for (const job of names) {
        out.push({ job, state: 'waiting', count: waiting.get(job)?.length ?? 0 });
        out.push({ job, state: 'active', count: handlers.get(job)?.running ?? 0 });
        out.push({ job, state: 'delayed', count: delayed.get(job) ?? 0 });
      }
      return out;
    },
    async close() {
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      schedules.clear();
    },
  };
}

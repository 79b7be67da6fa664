import { enforceTrafficLimits, expireDueSubscriptions, JOBS, resetEndedPeriods, SYSTEM, withActor } from '@svc/domain';
import type { Runtime } from '@svc/runtime';

const BATCH = 500;

export interface WorkerService {
  /** Takes jobs from the queue and makes sure the sweep is scheduled. */
  start(): Promise<void>;
  /** Stops taking jobs; a job in progress finishes first. */
  stop(): Promise<void>;
}

/**
 * The worker's job handlers (ARCHITECTURE.md apps/worker): in-process in all-in-one mode
 * (`svc start`), in apps/worker over BullMQ in split mode. As the system actor:
 * - `subscriptions.sweep`, scheduled every `sweepEveryMs` (one schedule however many
 *   workers): ended renewal periods reset (a limited subscription is active in its new
 *   period), reached traffic limits and passed expiries written down; each changed
 *   subscription's nodes get a new revision;
 * - `subscriptions.enforce-limits` {ids}: enqueued by the gateway after a usage report that
 *   brought subscriptions to their limits, so they stop being served at once, not at the
 *   next sweep.
 * Every handler is idempotent (a job may run twice after a crash): the domain sweeps lock
 * what they take (SKIP LOCKED) and move only rows still due.
 */
export function createWorker(rt: Runtime, opts: { sweepEveryMs?: number } = {}): WorkerService {
  const ctx = withActor(rt.deps, SYSTEM);
  const drain = async (sweep: () => Promise<number>) => {
    let total = 0;
    for (;;) {
      const n = await sweep();
      total += n;
      if (n < BATCH) return total;
    }
  };
  const stops: Array<() => Promise<void>> = [];
  return {
    start: async () => {
      stops.push(
        await rt.deps.jobs.consume(JOBS.subscriptionsSweep, async () => {
          // Resets first: a subscription limited in the old period is active in the new one.
          const reset = await drain(() => resetEndedPeriods(ctx, BATCH));
          const limited = await drain(() => enforceTrafficLimits(ctx, { batch: BATCH }));
          const expired = await drain(() => expireDueSubscriptions(ctx, BATCH));
          if (reset || limited || expired) rt.log.info({ reset, limited, expired }, 'subscription statuses written down');
        }),
      );
      stops.push(
        await rt.deps.jobs.consume(
          JOBS.enforceLimits,
          async ({ ids }) => {
            for (let i = 0; i < ids.length; i += BATCH) {
              const limited = await enforceTrafficLimits(ctx, { ids: ids.slice(i, i + BATCH), batch: BATCH });
              if (limited) rt.log.info({ limited }, 'traffic limits reached');
            }
          },
          { concurrency: 2 },
        ),
      );
      await rt.deps.jobs.schedule(JOBS.subscriptionsSweep, opts.sweepEveryMs ?? 30_000, {});
    },
    stop: async () => {
      for (const stop of stops.splice(0)) await stop();
    },
  };
}

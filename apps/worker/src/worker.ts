import { enforceTrafficLimitsOf, JOBS, SYSTEM, sweepSubscriptionStatuses, withActor } from '@svc/domain';
import type { Runtime } from '@svc/runtime';

export interface WorkerService {
  /** Takes jobs from the queue and makes sure the sweep is scheduled. */
  start(): Promise<void>;
  /** Stops taking jobs; a job in progress finishes first. */
  stop(): Promise<void>;
}

/**
 * The worker's job handlers (ARCHITECTURE.md apps/worker): in-process in all-in-one mode
 * (`svc start`), in apps/worker over BullMQ in split mode. Each takes a job and calls one
 * domain verb as the system actor:
 * - `subscriptions.sweep`, scheduled every `sweepEveryMs` (one schedule however many
 *   workers): sweepSubscriptionStatuses (ended periods, reached limits, passed expiries);
 * - `subscriptions.enforce-limits` {ids}: handed over by the usage ingest after a report that
 *   brought subscriptions to their limits, so they stop being served at once, not at the
 *   next sweep: enforceTrafficLimitsOf.
 * Every handler is idempotent (a job may run twice after a crash): the domain verbs lock
 * what they take (SKIP LOCKED) and move only rows still due.
 */
export function createWorker(rt: Runtime, opts: { sweepEveryMs?: number } = {}): WorkerService {
  const ctx = withActor(rt.deps, SYSTEM);
  const stops: Array<() => Promise<void>> = [];
  return {
    start: async () => {
      stops.push(
        await rt.deps.jobs.consume(JOBS.subscriptionsSweep, async () => {
          const written = await sweepSubscriptionStatuses(ctx);
          if (written.reset || written.limited || written.expired) rt.log.info(written, 'subscription statuses written down');
        }),
      );
      stops.push(
        await rt.deps.jobs.consume(
          JOBS.enforceLimits,
          async ({ ids }) => {
            const limited = await enforceTrafficLimitsOf(ctx, ids);
            if (limited) rt.log.info({ limited }, 'traffic limits reached');
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

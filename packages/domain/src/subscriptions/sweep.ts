import type { DomainContext } from '../shared/context.ts';
import { expireDueSubscriptions } from './expire-subscriptions.ts';
import { enforceTrafficLimits, resetEndedPeriods } from './limits.ts';
import { startDueTerms } from './start-on-first-use.ts';

/** Rows one statement takes; a sweep goes on batch after batch until a batch comes back short. */
const BATCH = 500;

async function drain(step: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await step();
    total += n;
    if (n < BATCH) return total;
  }
}

/**
 * Writes down what time and usage changed about subscription statuses, as the caller's actor
 * (the system, for the worker's scheduled `subscriptions.sweep`): renewal periods that ended
 * first (a subscription limited in the old period is active in the new one), then terms that
 * start on first use whose latest start came, then traffic limits reached, then expiries passed. Each step locks what it takes (SKIP LOCKED) and moves
 * only rows still due, so two sweeps at once, or one run again after a crash, change nothing
 * twice.
 */
export async function sweepSubscriptionStatuses(ctx: DomainContext): Promise<{ reset: number; limited: number; expired: number }> {
  const reset = await drain(() => resetEndedPeriods(ctx, BATCH));
  await drain(() => startDueTerms(ctx, BATCH));
  const limited = await drain(() => enforceTrafficLimits(ctx, { batch: BATCH }));
  const expired = await drain(() => expireDueSubscriptions(ctx, BATCH));
  return { reset, limited, expired };
}

/**
 * Applies the status rule now to subscriptions usage may have brought to their limit (a usage
 * credit hands over those whose row another transaction held; the job
 * `subscriptions.enforce-limits`), a batch at a time.
 * Returns how many became limited (or expired).
 */
export async function enforceTrafficLimitsOf(ctx: DomainContext, ids: readonly string[]): Promise<number> {
  let limited = 0;
  for (let i = 0; i < ids.length; i += BATCH) limited += await enforceTrafficLimits(ctx, { ids: ids.slice(i, i + BATCH), batch: BATCH });
  return limited;
}

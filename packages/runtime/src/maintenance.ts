import { enforceTrafficLimits, expireDueSubscriptions, resetEndedPeriods, SYSTEM, withActor } from '@svc/domain';
import type { Runtime } from './runtime.ts';

/**
 * Periodic upkeep until the worker app takes it over: the status transitions that time and
 * usage cause are written down and reach the nodes (new revisions), as the system actor:
 * ended renewal periods reset (a limited subscription is active again), reached traffic
 * limits, passed expiries. Safe on several replicas at once: each sweep locks the rows it
 * takes (SKIP LOCKED).
 */
export function startMaintenance(rt: Runtime, intervalMs = 30_000): () => void {
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      const ctx = withActor(rt.deps, SYSTEM);
      const drain = async (sweep: () => Promise<number>) => {
        let total = 0;
        for (;;) {
          const n = await sweep();
          total += n;
          if (n < 500) return total;
        }
      };
      // Resets first: a subscription limited in the old period is active in the new one.
      const reset = await drain(() => resetEndedPeriods(ctx));
      const limited = await drain(() => enforceTrafficLimits(ctx));
      const expired = await drain(() => expireDueSubscriptions(ctx));
      if (reset || limited || expired) rt.log.info({ reset, limited, expired }, 'subscription statuses written down');
    } catch (err) {
      rt.log.error({ err }, 'maintenance sweep failed');
    } finally {
      running = false;
    }
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  void tick();
  return () => clearInterval(timer);
}

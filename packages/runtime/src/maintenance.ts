import { expireDueSubscriptions, SYSTEM, withActor } from '@svc/domain';
import type { Runtime } from './runtime.ts';

/**
 * Periodic upkeep until the worker app takes it over: expiries that time alone causes are
 * written down and reach the nodes (new revisions). Safe on several replicas at once: the
 * sweep locks the rows it takes (SKIP LOCKED) and only moves active/limited rows.
 */
export function startMaintenance(rt: Runtime, intervalMs = 60_000): () => void {
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      const ctx = withActor(rt.deps, SYSTEM);
      let expired = 0;
      for (;;) {
        const n = await expireDueSubscriptions(ctx);
        expired += n;
        if (n < 500) break;
      }
      if (expired) rt.log.info({ expired }, 'subscriptions expired');
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

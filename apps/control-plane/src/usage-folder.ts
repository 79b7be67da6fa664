import { type DomainDeps, foldUsageInbox, type UsageFoldResult, usageInboxBacklog } from '@svc/domain';

/** How often a replica folds whatever is staged even when no report of its own asked (another replica's, or one staged before a crash). */
const SWEEP_MS = 1000;

export interface UsageFolder {
  /** A report was staged: fold soon (now, or right after the fold running). */
  kick(): void;
  /** Resolves once the staged backlog is under the limit (at once, nearly always): the acknowledgement of a report waits on it. */
  room(): Promise<void>;
  start(): void;
  /** Stops sweeping and waits for the fold under way. */
  stop(): Promise<void>;
}

/**
 * The gateway's side of staged usage (domain agents/usage-fold.ts): `concurrency` lanes, each
 * folding one batch at a time, run again at once while reports were staged during it or
 * entries were left, and every second regardless; the domain's per-node lock keeps two folds
 * (of this process or another replica) off the same node. A fold that fails (the database
 * gone) is logged and tried again at the next sweep: the staged rows wait for it.
 */
export function createUsageFolder(deps: DomainDeps, o: { maxEntries: number; inboxMaxEntries: number; concurrency: number }): UsageFolder {
  let backlog = 0;
  let sweep: NodeJS.Timeout | undefined;
  let stopped = false;
  const waiting: Array<() => void> = [];
  const release = () => {
    if (backlog < o.inboxMaxEntries) for (const w of waiting.splice(0)) w();
  };
  /** The backlog as a fold or a count left it: backpressure and the gauges follow it. */
  const staged = (entries: number, oldestMs: number) => {
    backlog = entries;
    deps.metrics.usageInbox.set(entries);
    deps.metrics.usageInboxOldest.set(oldestMs / 1000);
    release();
  };
  const record = (r: UsageFoldResult) => {
    staged(r.left, r.oldest_ms);
    if (r.credited > 0) deps.metrics.usageIngested.inc(r.credited);
    if (r.uncredited > 0) deps.metrics.usageRefused.inc({ reason: 'not_served' }, r.uncredited);
    // Counted on the node too (usage_entries_dropped): the sign of a node charging others.
    for (const d of r.uncredited_by_node)
      deps.log.info({ node_id: d.node_id, not_served: d.entries }, 'usage entries dropped: not served by the node that reported them');
  };
  /** One lane folds at a time; lanes fold different nodes side by side (the domain's per-node lock). */
  const lane = () => {
    let running: Promise<void> | null = null;
    let again = false;
    const loop = async () => {
      try {
        do {
          again = false;
          const r = await foldUsageInbox(deps, { maxEntries: o.maxEntries });
          // Other folds hold every node with staged reports: they fold until nothing is left.
          if (r === null) {
            const b = await usageInboxBacklog(deps);
            staged(b.entries, b.oldest_ms);
            break;
          }
          record(r);
          if (r.left > 0) again = true;
        } while (again && !stopped);
      } catch (err) {
        deps.log.error({ err }, 'usage fold failed; the staged reports wait for the next');
      } finally {
        running = null;
        for (const w of waiting.splice(0)) w();
      }
    };
    return {
      kick() {
        if (running) again = true;
        else running = loop();
      },
      done: () => running ?? Promise.resolve(),
    };
  };
  const lanes = Array.from({ length: o.concurrency }, lane);
  const kick = () => {
    if (!stopped) for (const l of lanes) l.kick();
  };
  return {
    kick,
    async room() {
      while (backlog >= o.inboxMaxEntries && !stopped) {
        const done = new Promise<void>((r) => waiting.push(r));
        kick();
        await done;
        // A failed fold leaves the backlog as it was: wait for the sweep rather than spin.
        if (backlog >= o.inboxMaxEntries) await new Promise((r) => setTimeout(r, SWEEP_MS).unref());
      }
    },
    start() {
      sweep = setInterval(kick, SWEEP_MS);
      sweep.unref();
      kick();
    },
    async stop() {
      stopped = true;
      clearInterval(sweep);
      await Promise.all(lanes.map((l) => l.done()));
      for (const w of waiting.splice(0)) w();
    },
  };
}

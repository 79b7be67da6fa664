import { type CompiledDesiredState, compileDesiredStates, MAX_NODES_PER_SNAPSHOT, type ModelDeps } from '@svc/desired-state';

export type Snapshot = CompiledDesiredState;

/** Where the gateway gets a node's latest DesiredState; null when the node is gone. */
export type SnapshotSource = (nodeId: string) => Promise<Snapshot | null>;

interface Waiter {
  resolve: (snapshot: Snapshot | null) => void;
  reject: (err: unknown) => void;
}

/**
 * The desired-state compiler over the database: revision and config from one consistent
 * read. Requests made in the same turn of the event loop (one nodes.changed message reaches
 * every session of its nodes at once) are read together: one snapshot per up to
 * `maxBatch` nodes instead of one transaction of ~7 statements per node, with the
 * subscriptions of shared access groups read once. Each node is compiled and handed to its
 * session in turn, yielding to the event loop between nodes so the sends go out as the
 * batch proceeds and at most one node's model is built at a time.
 */
export function compiledSource(deps: ModelDeps, maxBatch = 250): SnapshotSource {
  const size = Math.max(1, Math.min(maxBatch, MAX_NODES_PER_SNAPSHOT));
  let pending = new Map<string, Waiter[]>();
  let scheduled = false;

  const run = async (batch: Map<string, Waiter[]>): Promise<void> => {
    try {
      await compileDesiredStates(deps, [...batch.keys()], async (nodeId, state) => {
        const waiters = batch.get(nodeId) ?? [];
        batch.delete(nodeId);
        for (const w of waiters) w.resolve(state);
        await new Promise((r) => setImmediate(r));
      });
      for (const waiters of batch.values()) for (const w of waiters) w.resolve(null);
    } catch (err) {
      for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
    }
  };

  const flush = (): void => {
    scheduled = false;
    const all = [...pending];
    pending = new Map();
    for (let i = 0; i < all.length; i += size) void run(new Map(all.slice(i, i + size)));
  };

  return (nodeId) =>
    new Promise((resolve, reject) => {
      const waiters = pending.get(nodeId);
      if (waiters) waiters.push({ resolve, reject });
      else pending.set(nodeId, [{ resolve, reject }]);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}

import { type DomainDeps, recordAppliedRevisions } from '@svc/domain';

const MAX_BATCH = 500;

/**
 * Records successful ApplyResults, gathering those that arrive in the same turn of the event
 * loop into one statement: after a change to an access group shared by 1,000 nodes, their
 * results arrive within a second, and 1,000 single-row UPDATEs would compete with the
 * snapshots still being read for the same database pool. The returned promise settles when
 * the node's row is written (or the batch failed).
 */
export function appliedRevisionWriter(deps: Pick<DomainDeps, 'db' | 'clock'>): (nodeId: string, revision: number) => Promise<void> {
  let pending: Array<{ node_id: string; revision: number; resolve: () => void; reject: (err: unknown) => void }> = [];
  let scheduled = false;

  const write = async (batch: typeof pending): Promise<void> => {
    try {
      await recordAppliedRevisions(deps, batch);
      for (const p of batch) p.resolve();
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  };

  const flush = (): void => {
    scheduled = false;
    const all = pending;
    pending = [];
    for (let i = 0; i < all.length; i += MAX_BATCH) void write(all.slice(i, i + MAX_BATCH));
  };

  return (node_id, revision) =>
    new Promise<void>((resolve, reject) => {
      pending.push({ node_id, revision, resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}

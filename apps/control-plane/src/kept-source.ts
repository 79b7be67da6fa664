import type { SnapshotSource } from './desired-state-source.ts';
import type { LastPushStore } from './last-push-store.ts';

/** The least encoded size kept (a message below it is sent, not kept). */
export const KEEP_FROM_BYTES = 1024 * 1024;

/**
 * Issue 37.2: the first push to a big node from what was last sent to it. `inner` compiles;
 * this source asks `kept` first whenever the revision wanted is known (the node's desired
 * revision on admission, or the one a nodes.changed message named), and sends the kept bytes
 * when they are of exactly that revision, it is still the node's desired revision (one
 * indexed read), and their content still holds (no member's expiry passed since:
 * CompiledDesiredState.untilMs). Nodes with nothing kept cost a Set lookup
 * (bounded-file-dir.ts). Otherwise it compiles; what comes back encoded (a big node: `inner`
 * encodes from ENCODE_FROM_USERS users on, desired-state-source.ts) and is past KEEP_FROM_BYTES
 * is kept, with the gzip the send made of it (a kept message goes out with that gzip, not
 * deflated again). A node sent as compiled objects (a small one) is handed on as it is.
 *
 * A revision names one content (the rule the agent's Hello already relies on: an agent at the
 * desired revision is sent nothing), so a message kept for a revision is what compiling it
 * again would give, until untilMs.
 */
export function keptSource(
  inner: SnapshotSource,
  kept: LastPushStore,
  opts: {
    nowMs: () => number;
    /** The node's desired revision as committed now (desiredRevisionOf). */
    desiredRevision: (nodeId: string) => Promise<number | null>;
    counted?: (outcome: 'kept' | 'compiled') => void;
  },
): SnapshotSource {
  return async (nodeId, revision) => {
    if (revision !== undefined && Number.isFinite(revision)) {
      const found = await kept.get(nodeId, revision, opts.nowMs());
      // The revision asked for is still the newest (a change committed since it was read, and
      // announced before this session was listening, is compiled now rather than at the next
      // reconcile).
      if (found && (await opts.desiredRevision(nodeId)) === revision) {
        opts.counted?.('kept');
        return { revision, encoded: found };
      }
    }
    const snapshot = await inner(nodeId, revision);
    if (!snapshot?.encoded || snapshot.untilMs === undefined) return snapshot;
    opts.counted?.('compiled');
    const { bytes } = snapshot.encoded;
    if (bytes.length < KEEP_FROM_BYTES) return snapshot;
    const { revision: compiled, untilMs } = snapshot;
    kept.put(nodeId, compiled, untilMs, bytes);
    // What the send gzip'd is kept with it: the next first push sends it as it is.
    return { revision: compiled, encoded: { bytes, compressed: (level, gzipped) => kept.putGzip(nodeId, compiled, level, gzipped) } };
  };
}

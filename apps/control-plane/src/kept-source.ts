import type { ServerMessage } from '@svc/proto';
import type { SnapshotSource } from './desired-state-source.ts';
import type { LastPushStore } from './last-push-store.ts';

/** A node with fewer users is compiled each time (fast enough; nothing written to disk for it). */
export const KEEP_FROM_USERS = 10_000;
/** The least encoded size kept (a message below it is sent as compiled). */
export const KEEP_FROM_BYTES = 1024 * 1024;

/**
 * Issue 37.2: the first push to a big node from what was last sent to it. `inner` compiles;
 * this source asks `kept` first whenever the revision wanted is known (the node's desired
 * revision on admission, or the one a nodes.changed message named), and sends the kept bytes
 * when they are of exactly that revision, it is still the node's desired revision (one
 * indexed read), and their content still holds (no member's expiry passed since:
 * CompiledDesiredState.untilMs). Nodes with nothing kept cost a Set lookup
 * (bounded-file-dir.ts). Otherwise it compiles; a big node's message is encoded here (once: the
 * serializer sends these bytes, pre-encoded.ts) and kept, with the gzip the send made of it (a
 * kept message goes out with that gzip, not deflated again).
 *
 * A revision names one content (the rule the agent's Hello already relies on: an agent at the
 * desired revision is sent nothing), so a message kept for a revision is what compiling it
 * again would give, until untilMs.
 */
export function keptSource(
  inner: SnapshotSource,
  kept: LastPushStore,
  opts: {
    encode: (message: ServerMessage) => Uint8Array;
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
    if (!snapshot?.config || snapshot.untilMs === undefined) return snapshot;
    let users = 0;
    for (const inbound of snapshot.config.xray?.inbounds ?? []) users += inbound.users.length;
    if (users < KEEP_FROM_USERS) return snapshot;
    opts.counted?.('compiled');
    const bytes = opts.encode({ desiredState: { revision: BigInt(snapshot.revision), config: snapshot.config } });
    if (bytes.length < KEEP_FROM_BYTES) return { revision: snapshot.revision, encoded: { bytes } };
    const { revision: compiled, untilMs } = snapshot;
    kept.put(nodeId, compiled, untilMs, bytes);
    // What the send gzip'd is kept with it: the next first push sends it as it is.
    return { revision: compiled, encoded: { bytes, compressed: (level, gzipped) => kept.putGzip(nodeId, compiled, level, gzipped) } };
  };
}

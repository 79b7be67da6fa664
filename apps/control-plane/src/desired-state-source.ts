import {
  type CompiledDesiredState,
  compileDesiredStates,
  ENCODE_FROM_USERS,
  MAX_NODES_PER_SNAPSHOT,
  type ModelDeps,
} from '@svc/desired-state';
import { createTurnBatcher } from '@svc/runtime';
import type { Encoded } from './pre-encoded.ts';

/**
 * A node's DesiredState to send: compiled (its config, and until when that content holds:
 * CompiledDesiredState.untilMs), or already encoded as the ServerMessage that carries it (a big
 * node's: encoded where it was compiled, with its untilMs, or kept from before: kept-source.ts).
 */
export type Snapshot =
  | { revision: number; config: CompiledDesiredState['config']; untilMs?: number; encoded?: undefined }
  | ({ revision: number; config?: undefined; untilMs?: number } & { encoded: Encoded });

/**
 * Where the gateway gets a node's latest DesiredState; null when the node is gone. `revision`,
 * when known, is the one the session is after (the desired revision read on admission or named
 * by nodes.changed): a hint a source may answer from (kept-source.ts), never older than what it
 * would compile.
 */
export type SnapshotSource = (nodeId: string, revision?: number) => Promise<Snapshot | null>;

/**
 * The desired-state compiler over the database: revision and config from one consistent
 * read. Requests made in the same turn of the event loop (one nodes.changed message reaches
 * every session of its nodes at once) are read together: one snapshot per up to
 * `maxBatch` nodes instead of one transaction of ~7 statements per node, with the
 * subscriptions of shared access groups read once. Each node is compiled and handed to its
 * session in turn, yielding to the event loop between nodes so the sends go out as the
 * batch proceeds and at most one node's model is built at a time. A node of ENCODE_FROM_USERS
 * inbound users or more is handed on encoded (@svc/desired-state encodeDesiredState: its members
 * in runs kept from the compile before).
 */
export function compiledSource(deps: ModelDeps, maxBatch = 250): SnapshotSource {
  return createTurnBatcher<string, Snapshot | null>({
    maxBatch: Math.min(maxBatch, MAX_NODES_PER_SNAPSHOT),
    run: async (nodeIds, settle) => {
      await compileDesiredStates(
        deps,
        nodeIds,
        async (nodeId, state) => {
          // A big node comes encoded (the serializer sends those bytes as they are: pre-encoded.ts).
          settle(nodeId, state.encoded ? { revision: state.revision, untilMs: state.untilMs, encoded: { bytes: state.encoded } } : state);
          await new Promise((r) => setImmediate(r));
        },
        { encodeFromUsers: ENCODE_FROM_USERS },
      );
      // The compiler skips nodes that no longer exist.
      return () => null;
    },
  });
}

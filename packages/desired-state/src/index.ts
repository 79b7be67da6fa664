import { grantTrafficSlices, unitOfWork } from '@svc/domain';
import type { NodeConfig } from '@svc/proto';
import { compiledUntilMs, compileParts, fillParts } from './compile.ts';
import { encodeDesiredState } from './encode-desired-state.ts';
import { loadNodeModels, type ModelDeps } from './load-model.ts';
import type { NodeModel } from './model.ts';

export * from './compile.ts';
export { ENCODE_FROM_USERS, encodeDesiredState, RUN_SPAN, RunCache } from './encode-desired-state.ts';
export * from './load-model.ts';
export { DEFAULT_MEMBER_CACHE, MemberCache, type MemberCacheOptions } from './member-cache.ts';
export type * from './model.ts';
export { type NodeSlices, readSlices } from './read-slices.ts';
export { DEFAULT_SLICE_CACHE, SliceCache, type SliceCacheOptions } from './slice-cache.ts';

/** A node's DesiredState content: its revision and the config compiled from the same snapshot. */
export interface CompiledDesiredState {
  revision: number;
  config: NodeConfig;
  /** Until when (epoch ms) a compile of this revision gives this config (compiledUntilMs; Infinity: while the revision stands). */
  untilMs: number;
  encoded?: undefined;
}

/**
 * A big node's DesiredState content encoded where it was compiled (encode-desired-state.ts):
 * the ServerMessage that carries it, byte for byte what encoding the CompiledDesiredState would give.
 */
export interface EncodedDesiredState {
  revision: number;
  untilMs: number;
  config?: undefined;
  encoded: Uint8Array;
}

export interface CompileOptions {
  /** Nodes with this many inbound users or more are handed on encoded (EncodedDesiredState). */
  encodeFromUsers: number;
}

/**
 * Issue 36: every subscription a node serves with a traffic limit and no slice (or a half-used
 * one) gets its slice before the node's config is compiled: no user with a limit reaches a node
 * without a slice. The snapshot shows which may be due (mayBeDueSlices); only then are they
 * granted (grantTrafficSlices, which decides: the nodes granted any get a new revision) and
 * those nodes read again. Asking before every snapshot cost a join over every member of the
 * node (~300 ms at 100,000; bench/BENCHMARKS.md, big node); a usage credit grants a half-used
 * slice's successor itself, so a snapshot rarely finds one due.
 */
export async function grantDueSlices(deps: ModelDeps, due: ReadonlyMap<string, readonly string[]>): Promise<Set<string>> {
  if (due.size === 0) return new Set();
  const subscriptions = [...new Set([...due.values()].flat())];
  const grants = await unitOfWork(deps, (uow) => grantTrafficSlices(uow, [...due.keys()], deps.clock.now(), { subscriptions }), {
    attempts: 5,
  });
  return new Set(grants.map((g) => g.node_id));
}

/** One node's DesiredState content; null when the node does not exist. */
export async function compileDesiredState(deps: ModelDeps, nodeId: string): Promise<CompiledDesiredState | null> {
  let found: CompiledDesiredState | null = null;
  await compileDesiredStates(deps, [nodeId], (_, state) => {
    found = state;
  });
  return found;
}

/**
 * The DesiredState content of several nodes from one snapshot (loadNodeModels), handed to
 * `each` one node at a time as it is compiled. Nodes that do not exist are skipped. Nodes the
 * snapshot shows a traffic slice may be due on get their slices (grantDueSlices); those granted
 * any are compiled from a snapshot read after that, once, the others from the first.
 */
export async function compileDesiredStates(
  deps: ModelDeps,
  nodeIds: readonly string[],
  each: (nodeId: string, state: CompiledDesiredState) => void | Promise<void>,
): Promise<void>;
export async function compileDesiredStates(
  deps: ModelDeps,
  nodeIds: readonly string[],
  each: (nodeId: string, state: CompiledDesiredState | EncodedDesiredState) => void | Promise<void>,
  opts: CompileOptions,
): Promise<void>;
export async function compileDesiredStates(
  deps: ModelDeps,
  nodeIds: readonly string[],
  // Only the overload with `opts` takes a callback for encoded states; only with opts is one made.
  each: (nodeId: string, state: never) => void | Promise<void>,
  opts?: CompileOptions,
): Promise<void> {
  const hand = each as (nodeId: string, state: CompiledDesiredState | EncodedDesiredState) => void | Promise<void>;
  const compiled = (model: NodeModel) => {
    const parts = compileParts(model);
    const untilMs = compiledUntilMs(model);
    let users = 0;
    for (const u of parts.users) users += u.members.length;
    if (opts && users >= opts.encodeFromUsers)
      return hand(model.node_id, { revision: model.revision, untilMs, encoded: encodeDesiredState(model, parts) });
    return hand(model.node_id, { revision: model.revision, config: fillParts(parts, model), untilMs });
  };
  const held = new Map<string, { due: string[]; model: NodeModel }>();
  await loadNodeModels(deps, nodeIds, compiled, { slicesDue: held });
  if (held.size === 0) return;
  const granted = await grantDueSlices(deps, new Map([...held].map(([id, h]) => [id, h.due])));
  // Nothing granted on a node (its candidates were past their limit, say, until the status is
  // written down): the snapshot already read is the one to compile.
  for (const [id, h] of held) if (!granted.has(id)) await compiled(h.model);
  await loadNodeModels(deps, [...granted], compiled);
}

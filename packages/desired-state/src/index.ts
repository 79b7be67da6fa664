import { grantTrafficSlices, unitOfWork } from '@svc/domain';
import type { NodeConfig } from '@svc/proto';
import { compileNodeConfig } from './compile.ts';
import { loadNodeModel, loadNodeModels, type ModelDeps } from './load-model.ts';

export * from './compile.ts';
export * from './load-model.ts';
export { DEFAULT_MEMBER_CACHE, MemberCache, type MemberCacheOptions } from './member-cache.ts';
export type * from './model.ts';

/** A node's DesiredState content: its revision and the config compiled from the same snapshot. */
export interface CompiledDesiredState {
  revision: number;
  config: NodeConfig;
}

/**
 * Issue 36: before a snapshot is read, every subscription these nodes serve with a traffic limit
 * and no slice (or a half-used one) gets its slice (grantTrafficSlices; the nodes granted any
 * get a new revision, read by the snapshot that follows): no user with a limit reaches a node
 * without a slice. One statement when nothing is due.
 */
export async function grantDueSlices(deps: ModelDeps, nodeIds: readonly string[]): Promise<void> {
  if (nodeIds.length === 0) return;
  await unitOfWork(deps, (uow) => grantTrafficSlices(uow, nodeIds, deps.clock.now()), { attempts: 5 });
}

/** One node's DesiredState content; null when the node does not exist. */
export async function compileDesiredState(deps: ModelDeps, nodeId: string): Promise<CompiledDesiredState | null> {
  await grantDueSlices(deps, [nodeId]);
  const model = await loadNodeModel(deps, nodeId);
  return model ? { revision: model.revision, config: compileNodeConfig(model) } : null;
}

/**
 * The DesiredState content of several nodes from one snapshot (loadNodeModels), handed to
 * `each` one node at a time as it is compiled. Nodes that do not exist are skipped.
 */
export async function compileDesiredStates(
  deps: ModelDeps,
  nodeIds: readonly string[],
  each: (nodeId: string, state: CompiledDesiredState) => void | Promise<void>,
): Promise<void> {
  await grantDueSlices(deps, nodeIds);
  await loadNodeModels(deps, nodeIds, (model) => each(model.node_id, { revision: model.revision, config: compileNodeConfig(model) }));
}

import type { DomainDeps } from '@svc/domain';
import type { NodeConfig } from '@svc/proto';
import { compileNodeConfig } from './compile.ts';
import { loadNodeModel } from './load-model.ts';

export * from './compile.ts';
export * from './load-model.ts';
export type * from './model.ts';

/** A node's DesiredState content: its revision and the config compiled from the same snapshot. */
export async function compileDesiredState(
  deps: Pick<DomainDeps, 'db' | 'clock' | 'secrets'>,
  nodeId: string,
): Promise<{ revision: number; config: NodeConfig } | null> {
  const model = await loadNodeModel(deps, nodeId);
  return model ? { revision: model.revision, config: compileNodeConfig(model) } : null;
}

import { compileDesiredState } from '@svc/desired-state';
import type { DomainDeps } from '@svc/domain';
import type { NodeConfig } from '@svc/proto';

export interface Snapshot {
  revision: number;
  config: NodeConfig;
}

/** Where the gateway gets a node's latest DesiredState; null when the node is gone. */
export type SnapshotSource = (nodeId: string) => Promise<Snapshot | null>;

/** The desired-state compiler over the database: revision and config from one consistent read. */
export const compiledSource =
  (deps: Pick<DomainDeps, 'db' | 'clock' | 'secrets'>): SnapshotSource =>
  (nodeId) =>
    compileDesiredState(deps, nodeId);

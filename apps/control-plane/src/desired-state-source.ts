import type { DomainDeps } from '@svc/domain';
import type { NodeConfig } from '@svc/proto';

export interface Snapshot {
  revision: number;
  config: NodeConfig;
}

/** Where the gateway gets a node's latest DesiredState; null when the node is gone. */
export type SnapshotSource = (nodeId: string) => Promise<Snapshot | null>;

/**
 * Until the desired-state compiler lands (packages/desired-state), the snapshot carries the
 * node's revision and the engine-independent frame: direct and block outbounds.
 */
export function revisionOnlySource(deps: Pick<DomainDeps, 'db'>): SnapshotSource {
  return async (nodeId) => {
    const node = await deps.db.selectFrom('nodes').select('desired_revision').where('id', '=', nodeId).executeTakeFirst();
    if (!node) return null;
    return {
      revision: Number(node.desired_revision),
      config: {
        xray: {
          inbounds: [],
          outbounds: [
            { tag: 'direct', protocol: 5, address: '', port: 0, stream: undefined },
            { tag: 'block', protocol: 6, address: '', port: 0, stream: undefined },
          ],
          routingRules: [],
        },
        certificates: [],
      },
    };
  };
}

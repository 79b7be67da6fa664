import { type DomainDeps, engineOf, readTrafficSlices, type UnitOfWorkDeps, unitOfWork } from '@svc/domain';
import { MemberCache } from './member-cache.ts';
import type { ModelChain, ModelSlice, NodeModel } from './model.ts';
import { subscriptionsOfNode } from './node-subscriptions.ts';
import { type GroupMembers, readMembers, type SubscriptionRow } from './read-members.ts';
import { certificatesOf, groupBy, type InboundRow, readCertificates, readChains, readGrants, readInbounds } from './read-node-rows.ts';

export type { SubscriptionRow } from './read-members.ts';

/**
 * A snapshot is a read-only unit of work; secrets open the sealed keys it reads. With
 * `members`, the members of big access groups are kept between snapshots and only the buckets
 * that changed are read again (member-cache.ts; the gateway has one per process).
 */
export type ModelDeps = UnitOfWorkDeps & Pick<DomainDeps, 'secrets'> & { members?: MemberCache<SubscriptionRow> };

/** A member cache for loadNodeModels (the gateway's). */
export const createMemberCache = (options?: MemberCache['options']) => new MemberCache<SubscriptionRow>(options);

/** Most nodes one snapshot reads at once (the statements take their ids as parameters). */
export const MAX_NODES_PER_SNAPSHOT = 500;

/**
 * Reads everything node `nodeId` runs, together with its desired revision, in one
 * REPEATABLE READ transaction: the revision names exactly the state the config is compiled
 * from (a change committed meanwhile has a higher revision and is sent next). Null when the
 * node does not exist.
 */
export async function loadNodeModel(deps: ModelDeps, nodeId: string): Promise<NodeModel | null> {
  let found: NodeModel | null = null;
  await loadNodeModels(deps, [nodeId], (model) => {
    found = model;
  });
  return found;
}

/**
 * The models of several nodes from one REPEATABLE READ snapshot, read set-wise: six
 * statements whatever the number of nodes, and the subscriptions of an access group shared
 * by many of them are read once. `each` gets the models one at a time after the snapshot is
 * read (it may be async: the next model is built when it returns), so a burst of 1,000 small
 * nodes costs one snapshot, and a batch never holds more than one node's model beyond the
 * shared rows. Nodes that do not exist are skipped. At most MAX_NODES_PER_SNAPSHOT ids.
 */
export async function loadNodeModels(
  deps: ModelDeps,
  nodeIds: readonly string[],
  each: (model: NodeModel) => void | Promise<void>,
): Promise<void> {
  const ids = [...new Set(nodeIds)];
  if (ids.length === 0) return;
  if (ids.length > MAX_NODES_PER_SNAPSHOT) throw new RangeError(`at most ${MAX_NODES_PER_SNAPSHOT} nodes per snapshot`);
  const snapshot = await unitOfWork(
    deps,
    async ({ db: trx }) => {
      const nodes = await trx
        .selectFrom('nodes')
        .select(['id', 'desired_revision', 'compiled_engine_version'])
        .where('id', 'in', ids)
        .execute();
      if (nodes.length === 0) return null;
      const now = deps.clock.now();
      const inbounds = await readInbounds(
        trx,
        deps,
        nodes.map((n) => n.id),
      );
      const grants = await readGrants(
        trx,
        inbounds.map((i) => i.id),
      );
      const subscriptions = await readMembers(
        trx,
        [...new Set(grants.map((g) => g.access_group_id))],
        new Set(inbounds.map((i) => i.protocol)),
        deps.members,
      );
      const chains = await readChains(
        trx,
        deps,
        nodes.map((n) => n.id),
        inbounds,
      );
      const certificates = await readCertificates(trx, deps, inbounds);
      const slices = await readTrafficSlices(
        { db: trx },
        nodes.map((n) => n.id),
      );
      return { nodes, now, inbounds, grants, subscriptions, chains, certificates, slices };
    },
    { isolation: 'repeatable read', readOnly: true },
  );
  if (!snapshot) return;
  await modelsOfSnapshot(snapshot, ids, deps.members, each);
}

/** What one snapshot read: the rows the models of its nodes are made of. */
interface SnapshotRows {
  nodes: Array<{ id: string; desired_revision: string | number | bigint; compiled_engine_version: string | null }>;
  now: Date;
  inbounds: InboundRow[];
  grants: Array<{ access_group_id: string; inbound_id: string }>;
  subscriptions: Map<string, GroupMembers>;
  chains: ModelChain[];
  certificates: NodeModel['certificates'];
  slices: Array<{ node_id: string; subscription_id: string; slice_id: string; slice_bytes: string }>;
}

/** The models of a snapshot's nodes, in the order of `ids`, handed to `each` one at a time. */
async function modelsOfSnapshot(
  snapshot: SnapshotRows,
  ids: readonly string[],
  members: MemberCache<SubscriptionRow> | undefined,
  each: (model: NodeModel) => void | Promise<void>,
): Promise<void> {
  const inboundsOf = groupBy(snapshot.inbounds, (i) => i.node_id);
  const inboundsOfGroup = groupBy(snapshot.grants, (g) => g.access_group_id);
  const subscriptionsOfGroup = snapshot.subscriptions;
  const certificateById = new Map(snapshot.certificates.map((c) => [c.id, c]));
  const slicesOf = new Map<string, Map<string, ModelSlice>>();
  for (const s of snapshot.slices) {
    let m = slicesOf.get(s.node_id);
    if (!m) {
      m = new Map();
      slicesOf.set(s.node_id, m);
    }
    m.set(s.subscription_id, { slice_id: s.slice_id, slice_bytes: s.slice_bytes });
  }
  const byPosition = new Map(ids.map((id, k) => [id, k]));
  const nodes = [...snapshot.nodes].sort((a, b) => (byPosition.get(a.id) ?? 0) - (byPosition.get(b.id) ?? 0));
  for (const node of nodes) {
    const inbounds = (inboundsOf.get(node.id) ?? []).map(({ node_id: _, ...i }) => i);
    await each({
      node_id: node.id,
      revision: Number(node.desired_revision),
      now: snapshot.now,
      engine: engineOf(node.compiled_engine_version).capabilities,
      inbounds,
      subscriptions: subscriptionsOfNode(inbounds, snapshot.grants, inboundsOfGroup, subscriptionsOfGroup, members),
      chains: snapshot.chains.filter((c) => c.hops.some((h) => h.node_id === node.id) || inbounds.some((i) => i.chain_id === c.id)),
      certificates: certificatesOf(inbounds, certificateById),
      slices: slicesOf.get(node.id) ?? new Map(),
    });
  }
}

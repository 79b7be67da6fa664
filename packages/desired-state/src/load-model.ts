import { type DomainDeps, engineOf, type UnitOfWorkDeps, unitOfWork } from '@svc/domain';
import { sql } from 'kysely';
import { dueSlicesOf } from './due-slices.ts';
import { MemberCache } from './member-cache.ts';
import type { ModelChain, NodeModel } from './model.ts';
import { subscriptionsOfNode } from './node-subscriptions.ts';
import { type GroupMembers, readMembers, type SubscriptionRow } from './read-members.ts';
import { certificatesOf, groupBy, type InboundRow, readCertificates, readChains, readGrants, readInbounds } from './read-node-rows.ts';
import { type NodeSlices, readSlices } from './read-slices.ts';
import { SliceCache } from './slice-cache.ts';

export type { SubscriptionRow } from './read-members.ts';

/**
 * A snapshot is a read-only unit of work; secrets open the sealed keys it reads. With
 * `members`, the members of big access groups are kept between snapshots and only the buckets
 * that changed are read again (member-cache.ts); with `slices`, the traffic slices of big nodes,
 * only those granted since read again (slice-cache.ts). The gateway has one of each per process.
 */
export type ModelDeps = UnitOfWorkDeps & Pick<DomainDeps, 'secrets'> & { members?: MemberCache<SubscriptionRow>; slices?: SliceCache };

/** A member cache for loadNodeModels (the gateway's). */
export const createMemberCache = (options?: MemberCache['options']) => new MemberCache<SubscriptionRow>(options);

/** A slice cache for loadNodeModels (the gateway's). */
export const createSliceCache = (options?: SliceCache['options']) => new SliceCache(options);

export interface LoadOptions {
  /**
   * Issue 36: a node whose snapshot serves a member a traffic slice may be due for (mayBeDueSlices:
   * a limit and no slice, or a half-used one) is not handed to `each`; its candidates and its
   * model are put here (node id → both), for the caller to grant and then compile the model as
   * it is (nothing granted) or read the node again (granted). Held models are the exception to
   * one model at a time; such nodes are rare (a member added since the node's last snapshot).
   */
  slicesDue?: Map<string, { due: string[]; model: NodeModel }>;
}

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
  options: LoadOptions = {},
): Promise<void> {
  const ids = [...new Set(nodeIds)];
  if (ids.length === 0) return;
  if (ids.length > MAX_NODES_PER_SNAPSHOT) throw new RangeError(`at most ${MAX_NODES_PER_SNAPSHOT} nodes per snapshot`);
  const snapshot = await unitOfWork(
    deps,
    async ({ db: trx }) => {
      const nodes = await trx
        .selectFrom('nodes')
        .select(['id', 'desired_revision', 'compiled_engine_version', 'traffic_multiplier'])
        .where(sql<boolean>`id = any(${ids}::text[])`)
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
      const slices = await readSlices(
        trx,
        nodes.map((n) => n.id),
        deps.slices,
      );
      return { nodes, now, inbounds, grants, subscriptions, chains, certificates, slices };
    },
    { isolation: 'repeatable read', readOnly: true },
  );
  if (!snapshot) return;
  await modelsOfSnapshot(snapshot, ids, deps.members, each, options.slicesDue);
}

/** What one snapshot read: the rows the models of its nodes are made of. */
interface SnapshotRows {
  nodes: Array<{
    id: string;
    desired_revision: string | number | bigint;
    compiled_engine_version: string | null;
    traffic_multiplier: string;
  }>;
  now: Date;
  inbounds: InboundRow[];
  grants: Array<{ access_group_id: string; inbound_id: string }>;
  subscriptions: Map<string, GroupMembers>;
  chains: ModelChain[];
  certificates: NodeModel['certificates'];
  slices: Map<string, NodeSlices>;
}

/** The models of a snapshot's nodes, in the order of `ids`, handed to `each` one at a time. */
async function modelsOfSnapshot(
  snapshot: SnapshotRows,
  ids: readonly string[],
  members: MemberCache<SubscriptionRow> | undefined,
  each: (model: NodeModel) => void | Promise<void>,
  slicesDue: LoadOptions['slicesDue'],
): Promise<void> {
  const inboundsOf = groupBy(snapshot.inbounds, (i) => i.node_id);
  const inboundsOfGroup = groupBy(snapshot.grants, (g) => g.access_group_id);
  const groupsOfInbound = groupBy(snapshot.grants, (g) => g.inbound_id);
  const subscriptionsOfGroup = snapshot.subscriptions;
  const certificateById = new Map(snapshot.certificates.map((c) => [c.id, c]));
  const byPosition = new Map(ids.map((id, k) => [id, k]));
  const nodes = [...snapshot.nodes].sort((a, b) => (byPosition.get(a.id) ?? 0) - (byPosition.get(b.id) ?? 0));
  for (const node of nodes) {
    const inbounds = (inboundsOf.get(node.id) ?? []).map(({ node_id: _, ...i }) => i);
    const slices = snapshot.slices.get(node.id);
    const model: NodeModel = {
      node_id: node.id,
      revision: Number(node.desired_revision),
      now: snapshot.now,
      engine: engineOf(node.compiled_engine_version).capabilities,
      inbounds,
      subscriptions: subscriptionsOfNode(inbounds, groupsOfInbound, inboundsOfGroup, subscriptionsOfGroup, members),
      chains: snapshot.chains.filter((c) => c.hops.some((h) => h.node_id === node.id) || inbounds.some((i) => i.chain_id === c.id)),
      certificates: certificatesOf(inbounds, certificateById),
      slices: slices?.slices ?? new Map(),
    };
    if (slicesDue) {
      const due = dueSlicesOf(
        model.subscriptions,
        { multiplier: Number(node.traffic_multiplier), slices: model.slices ?? new Map(), halfUsed: slices?.halfUsed ?? new Set() },
        model.now,
      );
      if (due.length) {
        slicesDue.set(node.id, { due, model });
        continue;
      }
    }
    await each(model);
  }
}

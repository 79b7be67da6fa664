import type { Db } from '@svc/db';
import { sql } from 'kysely';
import type { UnitOfWork } from '../shared/unit-of-work.ts';
import { lockNodesInOrder } from './lock-nodes.ts';

/**
 * Revisions (docs/architecture.md, "One unit of work"; spec 3.5): a change that alters what a node must run bumps that
 * node's desired_revision inside the change's own transaction. These queries name the nodes
 * each kind of change reaches; every use case calls them instead of deciding on its own.
 * It takes the unit of work, not a bare transaction: the bumped nodes are announced after
 * its commit, so a bump that nobody would announce does not type-check.
 */
export async function bumpNodeRevisions(uow: UnitOfWork, nodeIds: Iterable<string>): Promise<string[]> {
  const ids = [...new Set(nodeIds)].sort();
  if (ids.length === 0) return [];
  await lockNodesInOrder(uow.db, ids);
  await uow.db
    .updateTable('nodes')
    .set({ desired_revision: sql`desired_revision + 1` as never })
    // One array parameter: a fan-out's 10,000 ids as a list of parameters took ~140 ms to plan and run.
    .where(sql<boolean>`id = any(${ids}::text[])`)
    .execute();
  uow.nodesChanged(ids);
  return ids;
}

/** Nodes that run any of these inbounds (users of an inbound live on its node). */
export async function nodesOfInbounds(trx: Db, inboundIds: readonly string[]): Promise<string[]> {
  if (inboundIds.length === 0) return [];
  const rows = await trx.selectFrom('inbounds').select('node_id').distinct().where('id', 'in', inboundIds).execute();
  return rows.map((r) => r.node_id);
}

/** Nodes with an inbound of this profile. */
export async function nodesOfProfile(trx: Db, profileId: string): Promise<string[]> {
  const rows = await trx.selectFrom('inbounds').select('node_id').distinct().where('profile_id', '=', profileId).execute();
  return rows.map((r) => r.node_id);
}

/** Nodes whose inbounds are granted by these access groups. */
export async function nodesOfAccessGroups(trx: Db, groupIds: readonly string[]): Promise<string[]> {
  if (groupIds.length === 0) return [];
  const rows = await trx
    .selectFrom('access_group_inbounds as g')
    .innerJoin('inbounds as i', 'i.id', 'g.inbound_id')
    .select('i.node_id')
    .distinct()
    .where('g.access_group_id', 'in', groupIds)
    .execute();
  return rows.map((r) => r.node_id);
}

/**
 * Nodes that carry a subscription's users: the nodes of its access groups' inbounds. The same
 * rule, seen from the node, is accessGroupsServedBy (fleet/serving.ts): what a node may be
 * credited usage for.
 */
export async function nodesOfSubscriptions(trx: Db, subscriptionIds: readonly string[]): Promise<string[]> {
  if (subscriptionIds.length === 0) return [];
  const rows = await trx
    .selectFrom('subscription_access_groups as s')
    .innerJoin('access_group_inbounds as g', 'g.access_group_id', 's.access_group_id')
    .innerJoin('inbounds as i', 'i.id', 'g.inbound_id')
    .select('i.node_id')
    .distinct()
    .where('s.subscription_id', 'in', subscriptionIds)
    .execute();
  return rows.map((r) => r.node_id);
}

/** Every hop of a chain, and the nodes of inbounds routed through it. */
export async function nodesOfChain(trx: Db, chainId: string): Promise<string[]> {
  const hops = await trx.selectFrom('chain_hops').select('node_id').where('chain_id', '=', chainId).execute();
  const inbounds = await trx.selectFrom('inbounds').select('node_id').where('chain_id', '=', chainId).execute();
  return [...new Set([...hops, ...inbounds].map((r) => r.node_id))];
}

/** Nodes serving TLS with this certificate (through a profile that references it). */
export async function nodesOfCertificate(trx: Db, certificateId: string): Promise<string[]> {
  const rows = await trx
    .selectFrom('inbounds as i')
    .innerJoin('inbound_profiles as p', 'p.id', 'i.profile_id')
    .select('i.node_id')
    .distinct()
    .where('p.certificate_id', '=', certificateId)
    .execute();
  return rows.map((r) => r.node_id);
}

/** Nodes that connect to this node: the hop right before it in every chain it is part of (its address is in their config). */
export async function nodesDialingNode(trx: Db, nodeId: string): Promise<string[]> {
  const rows = await trx
    .selectFrom('chain_hops as h')
    .innerJoin('chain_hops as prev', (j) =>
      j.onRef('prev.chain_id', '=', 'h.chain_id').on('prev.position', '=', sql<number>`h.position - 1`),
    )
    .select('prev.node_id')
    .distinct()
    .where('h.node_id', '=', nodeId)
    .execute();
  return rows.map((r) => r.node_id);
}

/** Nodes that carry any subscription of these clients (a client's status decides whether its users run). */
export async function nodesOfClients(trx: Db, clientIds: readonly string[]): Promise<string[]> {
  if (clientIds.length === 0) return [];
  const rows = await trx
    .selectFrom('subscriptions as sub')
    .innerJoin('subscription_access_groups as s', 's.subscription_id', 'sub.id')
    .innerJoin('access_group_inbounds as g', 'g.access_group_id', 's.access_group_id')
    .innerJoin('inbounds as i', 'i.id', 'g.inbound_id')
    .select('i.node_id')
    .distinct()
    .where('sub.client_id', 'in', clientIds)
    .execute();
  return rows.map((r) => r.node_id);
}

/** A node's desired revision as committed now; null when the node does not exist. */
export async function desiredRevisionOf(db: Db, nodeId: string): Promise<number | null> {
  const row = await db.selectFrom('nodes').select('desired_revision').where('id', '=', nodeId).executeTakeFirst();
  return row ? Number(row.desired_revision) : null;
}

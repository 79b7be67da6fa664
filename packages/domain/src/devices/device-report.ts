import type { Db } from '@svc/db';
import { sql } from 'kysely';
import { nodesOfSubscriptions } from '../fleet/revisions.ts';
import { TOPICS } from '../shared/bus.ts';
import { type UnitOfWork, type UnitOfWorkDeps, unitOfWork } from '../shared/unit-of-work.ts';
import { decideDenials, type SeenAddress } from './device-denials.ts';

/** Bounds of one DeviceReport (a node past them is misbehaving; the rest is dropped, not refused). */
export const REPORT_MAX_USERS = 100_000;
export const REPORT_MAX_ADDRESSES_PER_USER = 64;
const ID_MAX = 64;
const ADDRESS_MAX = 64;
const CHUNK = 1000;

export interface UserAddresses {
  subscription_id: string;
  /** Device keys (@svc/proto deviceAddress), checked by the transport. */
  addresses: readonly string[];
}

export interface DeviceReportResult {
  /** Users and addresses written; what was dropped (bounds, unknown subscriptions). */
  users: number;
  addresses: number;
  dropped: number;
  /** Nodes whose DeviceDenials changed (published on devices.denials-changed). */
  nodes: string[];
}

/** Safe for an id or address: the text rule is the transport's; here only length and plain ASCII. */
function plain(s: string, max: number): boolean {
  if (s.length < 1 || s.length > max) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

/**
 * A node's DeviceReport: the whole picture of its users' client addresses replaces the node's
 * rows (an address listed again keeps when it was first seen; one no longer listed goes, unless
 * refused: then it is held, unlisted, for the hold). Then the fleet-wide count (decideDenials)
 * runs for every subscription whose rows on this node changed (or are held here) that has a
 * device limit or refused addresses,
 * over all online nodes' rows, and the nodes whose DeviceDenials changed hear of it over the
 * bus (the replica holding each stream sends it: deviceDenialsOfNode). Bounded: at most
 * REPORT_MAX_USERS users and REPORT_MAX_ADDRESSES_PER_USER addresses each; duplicates, bad
 * values and subscriptions that do not exist are dropped.
 */
export async function recordDeviceReport(
  deps: UnitOfWorkDeps,
  nodeId: string,
  users: readonly UserAddresses[],
): Promise<DeviceReportResult> {
  const now = deps.clock.now();
  let dropped = 0;
  const wanted = new Map<string, Set<string>>();
  for (const u of users) {
    if (wanted.size >= REPORT_MAX_USERS || !plain(u.subscription_id, ID_MAX)) {
      dropped += 1;
      continue;
    }
    let set = wanted.get(u.subscription_id);
    if (!set) {
      set = new Set();
      wanted.set(u.subscription_id, set);
    }
    for (const a of u.addresses) {
      if (set.size >= REPORT_MAX_ADDRESSES_PER_USER || !plain(a, ADDRESS_MAX)) dropped += 1;
      else set.add(a);
    }
  }
  const result = await unitOfWork(deps, async (uow) => {
    const trx = uow.db;
    const ids = [...wanted.keys()];
    const known = new Set<string>();
    for (let i = 0; i < ids.length; i += CHUNK) {
      const rows = await trx
        .selectFrom('subscriptions')
        .select('id')
        .where('id', 'in', ids.slice(i, i + CHUNK))
        .execute();
      for (const r of rows) known.add(r.id);
    }
    // Only what changed is written (a node's steady picture costs one read): new addresses
    // inserted, ones listed again marked so, ones no longer listed deleted, or kept unlisted
    // while refused (the hold counts from then).
    const current = await trx
      .selectFrom('subscription_online_addresses')
      .select(['subscription_id', 'address', 'listed', 'denied_at'])
      .where('node_id', '=', nodeId)
      .execute();
    const key = (sub: string, address: string) => `${sub}\n${address}`;
    const reported = new Set<string>();
    const rows: Array<{ subscription_id: string; node_id: string; address: string; first_seen_at: Date; seen_at: Date }> = [];
    for (const [id, set] of wanted) {
      if (!known.has(id)) {
        dropped += set.size || 1;
        continue;
      }
      for (const address of set) {
        reported.add(key(id, address));
        rows.push({ subscription_id: id, node_id: nodeId, address, first_seen_at: now, seen_at: now });
      }
    }
    const had = new Set(current.map((r) => key(r.subscription_id, r.address)));
    const touched = new Set<string>();
    const group = (into: Map<string, string[]>, sub: string, address: string) => {
      const list = into.get(sub) ?? [];
      list.push(address);
      into.set(sub, list);
      touched.add(sub);
    };
    const relist = new Map<string, string[]>();
    const unlist = new Map<string, string[]>();
    const drop = new Map<string, string[]>();
    for (const r of current) {
      const listedNow = reported.has(key(r.subscription_id, r.address));
      if (listedNow && !r.listed) group(relist, r.subscription_id, r.address);
      else if (!listedNow && r.listed) group(r.denied_at === null ? drop : unlist, r.subscription_id, r.address);
      // Held here (its hold may run out at this report), or refused at all: its limit may have
      // changed without a recount (a plan bought); the count runs again for it.
      else if (!listedNow || r.denied_at !== null) touched.add(r.subscription_id);
    }
    const fresh = rows.filter((r) => !had.has(key(r.subscription_id, r.address)));
    for (const r of fresh) touched.add(r.subscription_id);
    for (let i = 0; i < fresh.length; i += CHUNK) {
      await trx
        .insertInto('subscription_online_addresses')
        .values(fresh.slice(i, i + CHUNK))
        .onConflict((oc) => oc.columns(['subscription_id', 'node_id', 'address']).doUpdateSet({ listed: true }))
        .execute();
    }
    for (const [sub, addresses] of relist)
      await trx
        .updateTable('subscription_online_addresses')
        .set({ listed: true, seen_at: now })
        .where('node_id', '=', nodeId)
        .where('subscription_id', '=', sub)
        .where('address', 'in', addresses)
        .execute();
    for (const [sub, addresses] of unlist)
      await trx
        .updateTable('subscription_online_addresses')
        .set({ listed: false, seen_at: now })
        .where('node_id', '=', nodeId)
        .where('subscription_id', '=', sub)
        .where('address', 'in', addresses)
        .execute();
    for (const [sub, addresses] of drop)
      await trx
        .deleteFrom('subscription_online_addresses')
        .where('node_id', '=', nodeId)
        .where('subscription_id', '=', sub)
        .where('address', 'in', addresses)
        .execute();
    const nodes = await recountDevicesIn(uow, [...touched], now);
    return { users: known.size, addresses: rows.length, nodes };
  });
  return { ...result, dropped };
}

/**
 * The fleet-wide count run again for these subscriptions inside a unit of work (their
 * device_limit changed: PATCH /subscriptions/{id}, a plan bought or renewed, a bulk job; or a
 * report): refusals marked or lifted in its transaction, and the nodes whose DeviceDenials
 * changed told after it commits (devices.denials-changed). Returns those nodes.
 */
export async function recountDevicesIn(uow: UnitOfWork, subscriptionIds: readonly string[], now: Date): Promise<string[]> {
  const changed = await countDevices(uow.db, subscriptionIds, now);
  if (changed.length === 0) return [];
  const nodes = await nodesOfDenials(uow.db, changed);
  if (nodes.length > 0) uow.publish(TOPICS.deviceDenialsChanged, { ids: nodes });
  return nodes;
}

/**
 * These nodes are taken for gone (announced offline after the grace, node-presence.ts): the
 * addresses they listed stop counting as live (countDevices counts online nodes' rows), so the
 * count runs again for the subscriptions they listed that it concerns (a device limit, or a
 * refused address), and a denial that only their devices caused lifts.
 */
export async function recountDevicesOfNodes(uow: UnitOfWork, nodeIds: readonly string[], now: Date): Promise<string[]> {
  if (nodeIds.length === 0) return [];
  const subs = await uow.db
    .selectFrom('subscription_online_addresses as o')
    .innerJoin('subscriptions as s', 's.id', 'o.subscription_id')
    .select('o.subscription_id')
    .distinct()
    .where('o.node_id', 'in', [...nodeIds])
    .where('o.listed', '=', true)
    .where((eb) => eb.or([eb('s.device_limit', 'is not', null), eb('o.denied_at', 'is not', null)]))
    .execute();
  return recountDevicesIn(
    uow,
    subs.map((r) => r.subscription_id),
    now,
  );
}

/** The same count in a unit of its own (after a change that committed). */
export async function recountDevices(deps: UnitOfWorkDeps, subscriptionIds: readonly string[]): Promise<string[]> {
  return unitOfWork(deps, (uow) => recountDevicesIn(uow, subscriptionIds, deps.clock.now()));
}

/**
 * The fleet-wide count for these subscriptions (those with a device limit or refused
 * addresses): refused addresses marked on all their rows, held ones past the hold forgotten.
 * Returns the subscriptions whose refused set changed.
 */
export async function countDevices(trx: Db, subscriptionIds: readonly string[], now: Date): Promise<string[]> {
  const changed: string[] = [];
  for (let i = 0; i < subscriptionIds.length; i += CHUNK) {
    const chunk = subscriptionIds.slice(i, i + CHUNK);
    if (chunk.length === 0) continue;
    // Only those the count concerns: a limit, or something refused before (a limit removed clears it).
    const subs = await trx
      .selectFrom('subscriptions as s')
      .select(['s.id', 's.device_limit'])
      .where('s.id', 'in', chunk)
      .where((eb) =>
        eb.or([
          eb('s.device_limit', 'is not', null),
          eb.exists(
            eb
              .selectFrom('subscription_online_addresses as o')
              .select(sql`1`.as('one'))
              .whereRef('o.subscription_id', '=', 's.id')
              .where('o.denied_at', 'is not', null),
          ),
        ]),
      )
      .execute();
    if (subs.length === 0) continue;
    const rows = await trx
      .selectFrom('subscription_online_addresses as o')
      .innerJoin('nodes as n', 'n.id', 'o.node_id')
      .select([
        'o.subscription_id',
        'o.address',
        sql<Date>`min(o.first_seen_at)`.as('first_seen_at'),
        sql<Date>`max(o.seen_at)`.as('seen_at'),
        sql<Date | null>`min(o.denied_at)`.as('denied_at'),
        sql<boolean>`bool_or(o.listed and n.connectivity = 'online')`.as('live'),
      ])
      .where(
        'o.subscription_id',
        'in',
        subs.map((s) => s.id),
      )
      .groupBy(['o.subscription_id', 'o.address'])
      .execute();
    const bySub = new Map<string, SeenAddress[]>();
    for (const r of rows) {
      const list = bySub.get(r.subscription_id) ?? [];
      list.push({
        address: r.address,
        first_seen_at: new Date(r.first_seen_at),
        seen_at: new Date(r.seen_at),
        denied_at: r.denied_at === null ? null : new Date(r.denied_at),
        live: r.live,
      });
      bySub.set(r.subscription_id, list);
    }
    for (const s of subs) {
      const seen = bySub.get(s.id) ?? [];
      const decision = decideDenials(s.device_limit, seen, now);
      const was = new Set(seen.filter((a) => a.denied_at !== null).map((a) => a.address));
      const is = new Set(decision.denied.map((d) => d.address));
      if (decision.forget.length > 0)
        await trx
          .deleteFrom('subscription_online_addresses')
          .where('subscription_id', '=', s.id)
          .where('address', 'in', decision.forget)
          .where((eb) => eb.or([eb('listed', '=', false), eb('denied_at', 'is not', null)]))
          .execute();
      const newly = decision.denied.filter((d) => !was.has(d.address)).map((d) => d.address);
      if (newly.length > 0)
        await trx
          .updateTable('subscription_online_addresses')
          .set({ denied_at: now })
          .where('subscription_id', '=', s.id)
          .where('address', 'in', newly)
          .execute();
      const allowed = [...was].filter((a) => !is.has(a));
      if (allowed.length > 0)
        await trx
          .updateTable('subscription_online_addresses')
          .set({ denied_at: null })
          .where('subscription_id', '=', s.id)
          .where('address', 'in', allowed)
          .execute();
      // Rows of the address on another node (or listed since) carry the same refusal.
      if (is.size > 0)
        await trx
          .updateTable('subscription_online_addresses')
          .set({ denied_at: now })
          .where('subscription_id', '=', s.id)
          .where('address', 'in', [...is])
          .where('denied_at', 'is', null)
          .execute();
      if (newly.length > 0 || allowed.length > 0 || decision.forget.some((a) => was.has(a))) changed.push(s.id);
    }
  }
  return changed;
}

/** The nodes that must hear of these subscriptions' refusals: those carrying their users, and those that reported them. */
async function nodesOfDenials(trx: Db, subscriptionIds: readonly string[]): Promise<string[]> {
  const serving = await nodesOfSubscriptions(trx, subscriptionIds);
  const reporting = await trx
    .selectFrom('subscription_online_addresses')
    .select('node_id')
    .distinct()
    .where('subscription_id', 'in', subscriptionIds)
    .execute();
  return [...new Set([...serving, ...reporting.map((r) => r.node_id)])].sort();
}

/** Every refused address of the fleet, by subscription then address (what deviceDenialsOfNode narrows to a node). */
export type RefusedAddresses = ReadonlyArray<{ subscription_id: string; address: string }>;

/** The fleet's refused addresses, read once for any number of nodes' DeviceDenials. */
export async function refusedAddresses(db: Db): Promise<RefusedAddresses> {
  return db
    .selectFrom('subscription_online_addresses')
    .select(['subscription_id', 'address'])
    .distinct()
    .where('denied_at', 'is not', null)
    .orderBy('subscription_id')
    .orderBy('address')
    .execute();
}

/**
 * A node's DeviceDenials, whole: for every subscription the node carries (or reported) that has
 * refused addresses, all of them, fleet-wide. Sorted, so equal sets compare equal. `refused`: the
 * fleet's refused addresses when the caller read them already (refusedAddresses), for many nodes at once.
 */
export async function deviceDenialsOfNode(
  db: Db,
  nodeId: string,
  refused?: RefusedAddresses,
): Promise<Array<{ subscription_id: string; addresses: string[] }>> {
  const denied = refused ?? (await refusedAddresses(db));
  if (denied.length === 0) return [];
  const subs = [...new Set(denied.map((d) => d.subscription_id))];
  const mine = new Set<string>();
  for (let i = 0; i < subs.length; i += CHUNK) {
    const chunk = subs.slice(i, i + CHUNK);
    const served = await db
      .selectFrom('subscription_access_groups as s')
      .innerJoin('access_group_inbounds as g', 'g.access_group_id', 's.access_group_id')
      .innerJoin('inbounds as i', 'i.id', 'g.inbound_id')
      .select('s.subscription_id')
      .distinct()
      .where('i.node_id', '=', nodeId)
      .where('s.subscription_id', 'in', chunk)
      .execute();
    for (const r of served) mine.add(r.subscription_id);
    const reported = await db
      .selectFrom('subscription_online_addresses')
      .select('subscription_id')
      .distinct()
      .where('node_id', '=', nodeId)
      .where('subscription_id', 'in', chunk)
      .execute();
    for (const r of reported) mine.add(r.subscription_id);
  }
  const out: Array<{ subscription_id: string; addresses: string[] }> = [];
  for (const d of denied) {
    if (!mine.has(d.subscription_id)) continue;
    const last = out[out.length - 1];
    if (last && last.subscription_id === d.subscription_id) last.addresses.push(d.address);
    else out.push({ subscription_id: d.subscription_id, addresses: [d.address] });
  }
  return out;
}

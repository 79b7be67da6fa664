import type { Db, Protocol } from '@svc/db';
import { type DomainDeps, type UnitOfWorkDeps, unitOfWork } from '@svc/domain';
import { sql } from 'kysely';
import type { ModelChain, ModelInbound, ModelSubscription, NodeModel } from './model.ts';

/** A snapshot is a read-only unit of work; secrets open the sealed keys it reads. */
export type ModelDeps = UnitOfWorkDeps & Pick<DomainDeps, 'secrets'>;

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
      const nodes = await trx.selectFrom('nodes').select(['id', 'desired_revision']).where('id', 'in', ids).execute();
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
      const subscriptions = await readSubscriptionsOfGroups(
        trx,
        [...new Set(grants.map((g) => g.access_group_id))],
        new Set(inbounds.map((i) => i.protocol)),
      );
      const chains = await readChains(
        trx,
        deps,
        nodes.map((n) => n.id),
        inbounds,
      );
      const certificates = await readCertificates(trx, deps, inbounds);
      return { nodes, now, inbounds, grants, subscriptions, chains, certificates };
    },
    { isolation: 'repeatable read', readOnly: true },
  );
  if (!snapshot) return;

  const inboundsOf = groupBy(snapshot.inbounds, (i) => i.node_id);
  const inboundsOfGroup = groupBy(snapshot.grants, (g) => g.access_group_id);
  const subscriptionsOfGroup = groupBy(snapshot.subscriptions, (s) => s.access_group_id);
  const certificateById = new Map(snapshot.certificates.map((c) => [c.id, c]));
  const byPosition = new Map(ids.map((id, k) => [id, k]));
  const nodes = [...snapshot.nodes].sort((a, b) => (byPosition.get(a.id) ?? 0) - (byPosition.get(b.id) ?? 0));
  for (const node of nodes) {
    const inbounds = (inboundsOf.get(node.id) ?? []).map(({ node_id: _, ...i }) => i);
    await each({
      node_id: node.id,
      revision: Number(node.desired_revision),
      now: snapshot.now,
      inbounds,
      subscriptions: subscriptionsOfNode(inbounds, snapshot.grants, inboundsOfGroup, subscriptionsOfGroup),
      chains: snapshot.chains.filter((c) => c.hops.some((h) => h.node_id === node.id) || inbounds.some((i) => i.chain_id === c.id)),
      certificates: certificatesOf(inbounds, certificateById),
    });
  }
}

type InboundRow = ModelInbound & { node_id: string };
/** A member of an access group as the driver returns it (int8 as text). */
interface SubscriptionRow {
  id: string;
  used_bytes: string | number | bigint;
  traffic_limit_bytes: string | number | bigint | null;
  /** Milliseconds since the epoch (a float8: the driver parses a number ~4× faster than a timestamptz). */
  expires_ms: number | string | null;
  vless_uuid: string;
  vmess_uuid: string;
  trojan_password: string;
  shadowsocks_password: string;
  access_group_id: string;
}

async function readInbounds(trx: Db, deps: Pick<DomainDeps, 'secrets'>, nodeIds: readonly string[]): Promise<InboundRow[]> {
  const rows = await trx
    .selectFrom('inbounds as i')
    .innerJoin('inbound_profiles as p', 'p.id', 'i.profile_id')
    .select([
      'i.id',
      'i.node_id',
      'i.tag',
      'i.port',
      'i.listen',
      'i.chain_id',
      'p.protocol',
      'p.stream',
      'p.sniffing',
      'p.vless_flow',
      'p.shadowsocks_method',
      'p.shadowsocks_server_key',
      'p.block_bittorrent',
      'p.reality_private_key_enc',
    ])
    .where('i.node_id', 'in', nodeIds)
    .orderBy('i.node_id')
    .orderBy('i.tag')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    node_id: r.node_id,
    tag: r.tag,
    port: r.port,
    listen: r.listen,
    chain_id: r.chain_id,
    protocol: r.protocol,
    stream: r.stream as unknown as ModelInbound['stream'],
    reality_private_key: r.reality_private_key_enc ? deps.secrets.open(r.reality_private_key_enc) : null,
    sniffing: r.sniffing,
    vless_flow: r.vless_flow,
    shadowsocks_method: r.shadowsocks_method,
    shadowsocks_server_key: r.shadowsocks_server_key,
    block_bittorrent: r.block_bittorrent,
  }));
}

/** Which access groups grant which of these inbounds. */
async function readGrants(trx: Db, inboundIds: readonly string[]): Promise<Array<{ access_group_id: string; inbound_id: string }>> {
  if (inboundIds.length === 0) return [];
  return trx
    .selectFrom('access_group_inbounds')
    .select(['access_group_id', 'inbound_id'])
    .where('inbound_id', 'in', inboundIds)
    .orderBy('access_group_id')
    .orderBy('inbound_id')
    .execute();
}

/**
 * Members of these access groups that may serve: one row per (subscription, group), read
 * by group (PostgreSQL runs this in about a quarter of the time of a join through every
 * granted inbound, and returns half the rows for a node with two inbounds; see
 * bench/BENCHMARKS.md). Stored status active, client active only: the compiler re-checks
 * expiry and limit against the snapshot's clock, and a limited, expired or disabled row, or
 * one of a client that is not active, serves nobody.
 */
async function readSubscriptionsOfGroups(
  trx: Db,
  groupIds: readonly string[],
  protocols: ReadonlySet<Protocol>,
): Promise<SubscriptionRow[]> {
  if (groupIds.length === 0) return [];
  const rows = await trx
    .selectFrom('subscription_access_groups as sag')
    .innerJoin('subscriptions as s', 's.id', 'sag.subscription_id')
    .innerJoin('clients as c', 'c.id', 's.client_id')
    .select([
      's.id',
      's.used_bytes',
      's.traffic_limit_bytes',
      // Parsing 100,000 timestamptz values into Dates costs the driver ~50 ms; a number costs little.
      sql<number | null>`floor(extract(epoch from s.expires_at) * 1000)::float8`.as('expires_ms'),
      // Only the credentials the nodes' protocols use (the rest read as ''): fewer columns
      // to send and parse for a big node.
      protocols.has('vless') ? 's.vless_uuid' : sql<string>`''`.as('vless_uuid'),
      protocols.has('vmess') ? 's.vmess_uuid' : sql<string>`''`.as('vmess_uuid'),
      protocols.has('trojan') ? 's.trojan_password' : sql<string>`''`.as('trojan_password'),
      protocols.has('shadowsocks') ? 's.shadowsocks_password' : sql<string>`''`.as('shadowsocks_password'),
      'sag.access_group_id',
    ])
    .where('sag.access_group_id', 'in', groupIds)
    .where('s.status', '=', 'active')
    .where('c.status', '=', 'active')
    .execute();
  // The driver's rows as they are (100,000 of them for a big node): converted once, per node, below.
  return rows;
}

/**
 * The subscriptions granted any of the node's inbounds, each with the ids of those inbounds
 * (in no particular order: the compiler orders users itself).
 */
function subscriptionsOfNode(
  inbounds: readonly ModelInbound[],
  grants: ReadonlyArray<{ access_group_id: string; inbound_id: string }>,
  inboundsOfGroup: ReadonlyMap<string, ReadonlyArray<{ inbound_id: string }>>,
  subscriptionsOfGroup: ReadonlyMap<string, readonly SubscriptionRow[]>,
): ModelSubscription[] {
  const mine = new Set(inbounds.map((i) => i.id));
  const groups = [...new Set(grants.filter((g) => mine.has(g.inbound_id)).map((g) => g.access_group_id))];
  const toModel = (r: SubscriptionRow, inbound_ids: string[]): ModelSubscription => ({
    id: r.id,
    status: 'active',
    used_bytes: Number(r.used_bytes),
    traffic_limit_bytes: r.traffic_limit_bytes === null ? null : Number(r.traffic_limit_bytes),
    expires_at: r.expires_ms === null ? null : new Date(Number(r.expires_ms)),
    client_status: 'active',
    vless_uuid: r.vless_uuid,
    vmess_uuid: r.vmess_uuid,
    trojan_password: r.trojan_password,
    shadowsocks_password: r.shadowsocks_password,
    inbound_ids,
  });
  const grantedBy = (group: string) => (inboundsOfGroup.get(group) ?? []).map((g) => g.inbound_id).filter((id) => mine.has(id));
  if (groups.length === 1) {
    // The common case (a node in one access group): every member once, no merging, and one
    // inbound list shared by all (the compiler only reads it).
    const granted = grantedBy(groups[0] as string);
    return (subscriptionsOfGroup.get(groups[0] as string) ?? []).map((r) => toModel(r, granted));
  }
  const byId = new Map<string, ModelSubscription>();
  for (const group of groups) {
    const granted = grantedBy(group);
    for (const r of subscriptionsOfGroup.get(group) ?? []) {
      const seen = byId.get(r.id);
      if (seen) {
        for (const id of granted) if (!seen.inbound_ids.includes(id)) seen.inbound_ids.push(id);
      } else byId.set(r.id, toModel(r, granted.slice()));
    }
  }
  return [...byId.values()];
}

function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const row of rows) {
    const k = key(row);
    const list = out.get(k);
    if (list) list.push(row);
    else out.set(k, [row]);
  }
  return out;
}

/** Chains these nodes are hops of, or whose entry inbounds they run, with every hop's address and (opened) secret. */
async function readChains(
  trx: Db,
  deps: Pick<DomainDeps, 'secrets'>,
  nodeIds: readonly string[],
  inbounds: readonly ModelInbound[],
): Promise<ModelChain[]> {
  const asHop = await trx.selectFrom('chain_hops').select('chain_id').where('node_id', 'in', nodeIds).execute();
  const asEntry = inbounds.flatMap((i) => (i.chain_id ? [i.chain_id] : []));
  const chainIds = [...new Set([...asHop.map((r) => r.chain_id), ...asEntry])].sort();
  if (chainIds.length === 0) return [];
  const hops = await trx
    .selectFrom('chain_hops as h')
    .innerJoin('nodes as n', 'n.id', 'h.node_id')
    .select(['h.chain_id', 'h.position', 'h.node_id', 'n.address', 'h.port', 'h.secret'])
    .where('h.chain_id', 'in', chainIds)
    .orderBy('h.chain_id')
    .orderBy('h.position')
    .execute();
  const hopsOf = groupBy(hops, (h) => h.chain_id);
  return chainIds.map((id) => ({
    id,
    hops: (hopsOf.get(id) ?? []).map((h) => ({
      position: h.position,
      node_id: h.node_id,
      address: h.address,
      port: h.port,
      secret: deps.secrets.open(h.secret),
    })),
  }));
}

async function readCertificates(
  trx: Db,
  deps: Pick<DomainDeps, 'secrets'>,
  inbounds: readonly ModelInbound[],
): Promise<NodeModel['certificates']> {
  const ids = [...new Set(inbounds.flatMap(certificateIdOf))];
  if (ids.length === 0) return [];
  const rows = await trx
    .selectFrom('certificates')
    .select(['id', 'cert_pem', 'key_pem_enc'])
    .where('id', 'in', ids)
    .orderBy('id')
    .execute();
  return rows
    .filter((r) => r.cert_pem && r.key_pem_enc)
    .map((r) => ({ id: r.id, cert_pem: r.cert_pem as string, key_pem: deps.secrets.open(r.key_pem_enc as string) }));
}

const certificateIdOf = (i: ModelInbound): string[] => (i.stream.security === 'tls' && i.stream.tls ? [i.stream.tls.certificate_id] : []);

/** Exactly the certificates the node's TLS inbounds reference, by id. */
function certificatesOf(
  inbounds: readonly ModelInbound[],
  byId: ReadonlyMap<string, NodeModel['certificates'][number]>,
): NodeModel['certificates'] {
  return [...new Set(inbounds.flatMap(certificateIdOf))].sort().flatMap((id) => {
    const c = byId.get(id);
    return c ? [c] : [];
  });
}

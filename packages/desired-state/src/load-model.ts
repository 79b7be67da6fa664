import type { Db, Protocol } from '@svc/db';
import { type DomainDeps, engineOf, limitReachedSql, type UnitOfWorkDeps, unitOfWork } from '@svc/domain';
import { type RawBuilder, sql } from 'kysely';
import { groupModels, type ReadOrder } from './group-models.ts';
import { Int8Sum } from './int8-sum.ts';
import { type KeptBucket, MemberCache } from './member-cache.ts';
import type { ModelChain, ModelInbound, ModelSubscription, NodeModel } from './model.ts';

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
      return { nodes, now, inbounds, grants, subscriptions, chains, certificates };
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
    });
  }
}

type InboundRow = ModelInbound & { node_id: string };
/** A member of an access group as the driver returns it (int8 as text). */
export interface SubscriptionRow {
  id: string;
  used_bytes: string | number | bigint;
  traffic_limit_bytes: string | number | bigint | null;
  /** Milliseconds since the epoch (a float8: the driver parses a number ~4× faster than a timestamptz). */
  expires_ms: number | string | null;
  vless_uuid: string;
  vmess_uuid: string;
  trojan_password: string;
  shadowsocks_password: string;
  /** Null when the statement read one group's members (readMembers knows which). */
  access_group_id: string | null;
  /** Its bucket in the member cache (BUCKET_SQL). */
  bucket: number;
  /** memberHash as text, when read for the member cache. */
  hash: string | null;
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
 * A group's members as read: in chunks (the member cache's buckets, or one chunk when read
 * whole). A kept bucket is the same array from snapshot to snapshot, so what is derived from
 * it (its members as ModelSubscriptions) is derived once.
 */
type MemberChunks = ReadonlyArray<readonly SubscriptionRow[]>;

/** A group's members as read, and for a group read whole into buckets the order its rows came in (group-models.ts ReadOrder). */
interface GroupMembers {
  chunks: MemberChunks;
  readOrder?: ReadOrder<SubscriptionRow>;
}

/** A member's bucket in the member cache: 0..255 from PostgreSQL's hash of its id. */
const BUCKET_SQL = sql<number>`hashtext(s.id) & 255`;

/** Each protocol's credential column of `subscriptions`. */
const CREDENTIALS = [
  ['vless', 'vless_uuid'],
  ['vmess', 'vmess_uuid'],
  ['trojan', 'trojan_password'],
  ['shadowsocks', 'shadowsocks_password'],
] as const satisfies ReadonlyArray<readonly [Protocol, string]>;

/**
 * Members of access groups that may serve: stored status active, client active only (the
 * compiler re-checks expiry and limit against the snapshot's clock; a limited, expired or
 * disabled row, or one of a client that is not active, serves nobody). One row per
 * (subscription, group), read by group (PostgreSQL runs this in about a quarter of the time
 * of a join through every granted inbound, and returns half the rows for a node with two
 * inbounds; see bench/BENCHMARKS.md).
 */
/** Group memberships whose subscription is stored active and whose client is active: the one filter of rows and digests alike. */
function servingMembers(trx: Db) {
  return trx
    .selectFrom('subscription_access_groups as sag')
    .innerJoin('subscriptions as s', 's.id', 'sag.subscription_id')
    .innerJoin('clients as c', 'c.id', 's.client_id')
    .where('s.status', '=', 'active')
    .where('c.status', '=', 'active');
}

function members(trx: Db, protocols: ReadonlySet<Protocol>, withHash = false, withGroup = true) {
  const cred = (p: Protocol, column: (typeof CREDENTIALS)[number][1]) =>
    protocols.has(p) ? (`s.${column}` as const) : sql<string>`''`.as(column);
  return servingMembers(trx).select([
    's.id',
    's.used_bytes',
    's.traffic_limit_bytes',
    // Parsing 100,000 timestamptz values into Dates costs the driver ~50 ms; a number costs little.
    sql<number | null>`floor(extract(epoch from s.expires_at) * 1000)::float8`.as('expires_ms'),
    // Only the credentials the nodes' protocols use: fewer columns to send and parse for a big node.
    cred('vless', 'vless_uuid'),
    cred('vmess', 'vmess_uuid'),
    cred('trojan', 'trojan_password'),
    cred('shadowsocks', 'shadowsocks_password'),
    // One group's members need not say which group (100,000 strings fewer to parse).
    withGroup ? 'sag.access_group_id' : sql<string | null>`null::text`.as('access_group_id'),
    BUCKET_SQL.as('bucket'),
    // The member's hash (to keep it: the bucket's digest is the sum), or nothing.
    withHash ? sql<string | null>`${memberHash(protocols)}::text`.as('hash') : sql<string | null>`null::text`.as('hash'),
  ]);
}

/**
 * A 64-bit hash of what the compiler reads of a member: its id, limit, expiry, the credentials
 * of the nodes' protocols, and whether the limit is reached (limitReachedSql; not used_bytes
 * itself, which every usage report moves). Native hash functions, one per column with its own
 * seed, xor'd: no text is built (a digest pass over 100,000 members costs ~100 ms in
 * PostgreSQL against ~130 ms through concat_ws and ~200 ms to send the rows).
 */
function memberHash(protocols: ReadonlySet<Protocol>): RawBuilder<string> {
  const terms: RawBuilder<unknown>[] = [
    sql`hashtextextended(s.id, coalesce(s.traffic_limit_bytes, -1))`,
    sql`hashint8extended(${limitReachedSql()}::int, 1)`,
    sql`coalesce(timestamp_hash_extended(s.expires_at::timestamp, 2), 0)`,
  ];
  if (protocols.has('vless')) terms.push(sql`uuid_hash_extended(s.vless_uuid, 3)`);
  if (protocols.has('vmess')) terms.push(sql`uuid_hash_extended(s.vmess_uuid, 4)`);
  if (protocols.has('trojan')) terms.push(sql`hashtextextended(s.trojan_password, 5)`);
  if (protocols.has('shadowsocks')) terms.push(sql`hashtextextended(s.shadowsocks_password, 6)`);
  return sql<string>`(${sql.join(terms, sql` # `)})`;
}

/** Per (group, bucket) of these groups' members: how many, and the sum of their memberHash. */
async function digestsOf(
  trx: Db,
  groupIds: readonly string[],
  protocols: ReadonlySet<Protocol>,
): Promise<Map<string, Map<number, { count: number; sum: string }>>> {
  const rows = await servingMembers(trx)
    .where('sag.access_group_id', 'in', groupIds)
    .select([
      'sag.access_group_id',
      BUCKET_SQL.as('bucket'),
      sql<string>`count(*)`.as('count'),
      sql<string>`sum(${memberHash(protocols)})::text`.as('sum'),
    ])
    .groupBy(['sag.access_group_id', BUCKET_SQL])
    .execute();
  const out = new Map<string, Map<number, { count: number; sum: string }>>();
  for (const r of rows) {
    let g = out.get(r.access_group_id);
    if (!g) {
      g = new Map();
      out.set(r.access_group_id, g);
    }
    g.set(Number(r.bucket), { count: Number(r.count), sum: String(r.sum) });
  }
  return out;
}

/**
 * The members of these groups, by group. Without a cache, one statement. With one
 * (member-cache.ts): groups kept from an earlier snapshot get their digests compared and only
 * the changed buckets read; the others are read whole, and the big ones among them kept with
 * their digests (taken in this same transaction).
 */
async function readMembers(
  trx: Db,
  groupIds: readonly string[],
  protocols: ReadonlySet<Protocol>,
  cache: MemberCache<SubscriptionRow> | undefined,
): Promise<Map<string, GroupMembers>> {
  const out = new Map<string, GroupMembers>();
  if (groupIds.length === 0) return out;
  const shape = [...protocols].sort().join(',');
  const kept = new Map<string, Map<number, KeptBucket<SubscriptionRow>>>();
  if (cache)
    for (const g of groupIds) {
      const buckets = cache.take(g, shape);
      if (buckets) kept.set(g, buckets);
    }

  const whole = groupIds.filter((g) => !kept.has(g));
  if (whole.length) {
    // The driver's rows as they are (100,000 of them for a big node): converted once, per node, later.
    // With a cache, each row carries its hash: the buckets' digests are summed here, no second pass.
    const read = new Map<string, SubscriptionRow[]>();
    const rows = await members(trx, protocols, cache !== undefined, whole.length > 1)
      .where('sag.access_group_id', 'in', whole)
      .execute();
    if (whole.length === 1) {
      if (rows.length) read.set(whole[0] as string, rows);
    } else for (const r of rows) push(read, r.access_group_id as string, r);
    for (const [g, rows] of read) out.set(g, { chunks: [rows] });
    if (cache) {
      cache.stats.groupsReadWhole += whole.length;
      const { minGroupRows, maxRows } = cache.options;
      for (const g of whole) {
        const rows = read.get(g) ?? [];
        if (rows.length < minGroupRows || rows.length > maxRows) continue;
        out.set(g, keepReadWhole(cache, g, shape, rows));
      }
    }
  }

  if (cache && kept.size) {
    const digests = await digestsOf(trx, [...kept.keys()], protocols);
    // Compared and taken in one synchronous step: what is kept is what this snapshot uses.
    const next = new Map<string, Map<number, KeptBucket<SubscriptionRow>>>();
    const changed = new Map<string, Set<number>>();
    for (const [g, buckets] of kept) {
      const now = digests.get(g) ?? new Map<number, { count: number; sum: string }>();
      const mine = new Map<number, KeptBucket<SubscriptionRow>>();
      for (const [b, d] of now) {
        const k = buckets.get(b);
        if (k && k.count === d.count && k.sum === d.sum) mine.set(b, k);
        else {
          let set = changed.get(g);
          if (!set) {
            set = new Set();
            changed.set(g, set);
          }
          set.add(b);
        }
      }
      // A bucket kept but absent from `now` has no members any more: it is left out.
      next.set(g, mine);
      cache.stats.bucketsKept += mine.size;
    }
    if (changed.size) {
      const buckets = [...new Set([...changed.values()].flatMap((s) => [...s]))];
      const rows = await members(trx, protocols)
        .where('sag.access_group_id', 'in', [...changed.keys()])
        .where(BUCKET_SQL, 'in', buckets)
        .execute();
      const fresh = new Map<string, SubscriptionRow[]>();
      for (const r of rows) if (changed.get(r.access_group_id as string)?.has(r.bucket)) push(fresh, `${r.access_group_id} ${r.bucket}`, r);
      for (const [g, set] of changed) {
        const now = digests.get(g);
        for (const b of set) {
          const d = now?.get(b);
          if (d) next.get(g)?.set(b, { ...d, rows: fresh.get(`${g} ${b}`) ?? [] });
        }
        cache.stats.bucketsRead += set.size;
      }
    }
    for (const [g, buckets] of next) {
      out.set(g, { chunks: [...buckets.values()].map((b) => b.rows) });
      cache.keep(g, shape, buckets);
    }
  }
  return out;
}

/** A group read whole (its rows with their hash) kept in the cache by bucket; its chunks, handed on with the order the rows came in. */
function keepReadWhole(
  cache: MemberCache<SubscriptionRow>,
  groupId: string,
  shape: string,
  rows: readonly SubscriptionRow[],
): GroupMembers {
  const buckets = bucketsOf(rows);
  cache.keep(groupId, shape, buckets);
  // Kept by bucket, and handed on by bucket: the next snapshot's unchanged buckets are these same arrays.
  const chunks = [...buckets.values()].map((b) => b.rows);
  // Each row's chunk by its bucket (0..255, BUCKET_SQL): an array lookup per row.
  const chunkOfBucket = new Int32Array(256).fill(-1);
  [...buckets.keys()].forEach((b, k) => {
    if (b >= 0 && b < 256) chunkOfBucket[b] = k;
  });
  return { chunks, readOrder: { rows, chunkIndex: (r) => chunkOfBucket[r.bucket] ?? -1 } };
}

/**
 * A group's rows (read with their hash) in buckets, each with its digest: the count, and the
 * sum of the hashes as PostgreSQL sums them. One pass over the rows: on a big node's first push
 * every pass over 100,000 freshly read rows costs ~30-50 ms, most of it waiting on memory.
 */
function bucketsOf(rows: readonly SubscriptionRow[]): Map<number, KeptBucket<SubscriptionRow>> {
  const byBucket = new Map<number, { rows: SubscriptionRow[]; sum: Int8Sum }>();
  for (const r of rows) {
    let b = byBucket.get(r.bucket);
    if (!b) {
      b = { rows: [], sum: new Int8Sum() };
      byBucket.set(r.bucket, b);
    }
    b.rows.push(r);
    b.sum.add(r.hash as string);
  }
  const out = new Map<number, KeptBucket<SubscriptionRow>>();
  for (const [k, b] of byBucket) out.set(k, { count: b.rows.length, sum: b.sum.toString(), rows: b.rows });
  return out;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * The subscriptions granted any of the node's inbounds, each with the ids of those inbounds
 * (in no particular order: the compiler orders users itself).
 */
function subscriptionsOfNode(
  inbounds: readonly ModelInbound[],
  grants: ReadonlyArray<{ access_group_id: string; inbound_id: string }>,
  inboundsOfGroup: ReadonlyMap<string, ReadonlyArray<{ inbound_id: string }>>,
  subscriptionsOfGroup: ReadonlyMap<string, GroupMembers>,
  cache: MemberCache<SubscriptionRow> | undefined,
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
    // inbound list shared by all (the compiler only reads it); made once per chunk, kept in order (group-models.ts).
    const group = groups[0] as string;
    const granted = grantedBy(group);
    const members = subscriptionsOfGroup.get(group);
    return groupModels(
      members?.chunks ?? [],
      granted.join('\n'),
      (r) => toModel(r, granted),
      // An order is kept only with a group the cache holds (a small group is read whole and compiled as read).
      cache?.holds(group) ? { cache, groupId: group } : undefined,
      members?.readOrder,
    );
  }
  const byId = new Map<string, ModelSubscription>();
  for (const group of groups) {
    const granted = grantedBy(group);
    for (const r of (subscriptionsOfGroup.get(group)?.chunks ?? []).flat()) {
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

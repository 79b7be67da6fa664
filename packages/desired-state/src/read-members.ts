import type { Db, Protocol } from '@svc/db';
import { sql } from 'kysely';
import type { ReadOrder } from './group-models.ts';
import { Int8Sum } from './int8-sum.ts';
import type { KeptBucket, MemberCache } from './member-cache.ts';

/**
 * The members of the access groups a snapshot's nodes serve: the rows that may serve, read
 * whole or, with the member cache, only the buckets whose digest changed since the last
 * snapshot (member-cache.ts).
 */

/** A member of an access group as the driver returns it (int8 as text). */
export interface SubscriptionRow {
  id: string;
  traffic_limit_bytes: string | number | bigint | null;
  /** Milliseconds since the epoch (a float8: the driver parses a number ~4× faster than a timestamptz). */
  expires_ms: number | string | null;
  /** Issue 36: live limits (int8 caps as text). */
  device_limit: number | null;
  upload_bps: string | number | null;
  download_bps: string | number | null;
  vless_uuid: string;
  vmess_uuid: string;
  trojan_password: string;
  shadowsocks_password: string;
  /** Null when the statement read one group's members (readMembers knows which). */
  access_group_id: string | null;
  /** Its bucket in the member cache (BUCKET_SQL). */
  bucket: number;
  /** subscriptions.member_hash as text, when read for the member cache. */
  hash: string | null;
}

/**
 * A group's members as read: in chunks (the member cache's buckets, or one chunk when read
 * whole). A kept bucket is the same array from snapshot to snapshot, so what is derived from
 * it (its members as ModelSubscriptions) is derived once.
 */
export type MemberChunks = ReadonlyArray<readonly SubscriptionRow[]>;

/** A group's members as read, and for a group read whole into buckets the order its rows came in (group-models.ts ReadOrder). */
export interface GroupMembers {
  chunks: MemberChunks;
  readOrder?: ReadOrder<SubscriptionRow>;
}

/** A member's bucket in the member cache: 0..255 from PostgreSQL's hash of its id (a generated, indexed column). */
const BUCKET_SQL = sql<number>`s.bucket`;

/** Each protocol's credential column of `subscriptions`. */
const CREDENTIALS = [
  ['vless', 'vless_uuid'],
  ['vmess', 'vmess_uuid'],
  ['trojan', 'trojan_password'],
  ['shadowsocks', 'shadowsocks_password'],
] as const satisfies ReadonlyArray<readonly [Protocol, string]>;

/** Group memberships whose subscription is stored active and whose client is active: the one filter of rows and digests alike. */
function servingMembers(trx: Db) {
  return (
    trx
      .selectFrom('subscription_access_groups as sag')
      // No counters: a limit reached is stored in the status by the credit that reached it
      // (storedStatusAsOf), so the read is one join shorter (issue 37.2: ~100 ms at 100,000 members).
      .innerJoin('subscriptions as s', 's.id', 'sag.subscription_id')
      .innerJoin('clients as c', 'c.id', 's.client_id')
      .where('s.status', '=', 'active')
      .where('c.status', '=', 'active')
  );
}

/**
 * Members of access groups that may serve: stored status active, client active only (the
 * compiler applies the snapshot's clock to the expiry; a limited, expired or disabled row, or
 * one of a client that is not active, serves nobody). One row per
 * (subscription, group), read by group (PostgreSQL runs this in about a quarter of the time
 * of a join through every granted inbound, and returns half the rows for a node with two
 * inbounds; see bench/BENCHMARKS.md).
 */
function members(trx: Db, protocols: ReadonlySet<Protocol>, withHash = false, withGroup = true) {
  const cred = (p: Protocol, column: (typeof CREDENTIALS)[number][1]) =>
    protocols.has(p) ? (`s.${column}` as const) : sql<string>`''`.as(column);
  return servingMembers(trx).select([
    's.id',
    's.traffic_limit_bytes',
    // Parsing 100,000 timestamptz values into Dates costs the driver ~50 ms; a number costs little.
    sql<number | null>`floor(extract(epoch from s.expires_at) * 1000)::float8`.as('expires_ms'),
    's.device_limit',
    's.upload_bps',
    's.download_bps',
    // Only the credentials the nodes' protocols use: fewer columns to send and parse for a big node.
    cred('vless', 'vless_uuid'),
    cred('vmess', 'vmess_uuid'),
    cred('trojan', 'trojan_password'),
    cred('shadowsocks', 'shadowsocks_password'),
    // One group's members need not say which group (100,000 strings fewer to parse).
    withGroup ? 'sag.access_group_id' : sql<string | null>`null::text`.as('access_group_id'),
    BUCKET_SQL.as('bucket'),
    // The member's hash (to keep it: the bucket's digest is the sum), or nothing.
    withHash ? sql<string | null>`${MEMBER_HASH_SQL}::text`.as('hash') : sql<string | null>`null::text`.as('hash'),
  ]);
}

/**
 * A 64-bit hash of what the compiler reads of a member: its id, limit, expiry, live limits and
 * its credentials (its status is the filter: a member that leaves active leaves the bucket's
 * count and sum). A generated column (migration 2026-12-02T1600: native hash functions, one per
 * column with its own seed, xor'd), so a digest pass sums stored values (~47 ms over 100,000
 * members against ~73 ms hashing them each time). It covers every credential, whichever the
 * nodes run: a rotated credential a node does not use reads its bucket again, and finds its
 * members' rows as they were (keepUnchangedRows).
 */
const MEMBER_HASH_SQL = sql<string>`s.member_hash`;

/**
 * Per (group, bucket) of these groups' members: how many, and the sum of their member_hash. A
 * merge join of two index-only scans (migration 2026-12-02T1700: memberships in group and id
 * order, the subscription's id with what the digest reads), run serially: PostgreSQL otherwise
 * plans it with parallel workers and a hash of every member (~200-290 ms against ~64 ms for
 * 100,000 members on a 2-core machine; starting workers costs more than they save here). The
 * setting is the transaction's, for this statement only.
 */
async function digestsOf(trx: Db, groupIds: readonly string[]): Promise<Map<string, Map<number, { count: number; sum: string }>>> {
  await sql`set local max_parallel_workers_per_gather = 0`.execute(trx);
  const rows = await servingMembers(trx)
    .where('sag.access_group_id', 'in', groupIds)
    .select([
      'sag.access_group_id',
      BUCKET_SQL.as('bucket'),
      sql<string>`count(*)`.as('count'),
      sql<string>`sum(${MEMBER_HASH_SQL})::text`.as('sum'),
    ])
    .groupBy(['sag.access_group_id', BUCKET_SQL])
    .execute();
  await sql`set local max_parallel_workers_per_gather to default`.execute(trx);
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
export async function readMembers(
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
    const digests = await digestsOf(trx, [...kept.keys()]);
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
          const rows = fresh.get(`${g} ${b}`) ?? [];
          if (d) next.get(g)?.set(b, { ...d, rows: keepUnchangedRows(kept.get(g)?.get(b)?.rows, rows) });
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

/**
 * A bucket read again, its rows whose columns are all as before given as the row objects kept:
 * what is kept by a row's identity (its ModelSubscription: group-models.ts and
 * node-subscriptions.ts; the encoded runs it is in: encode-desired-state.ts) stays for the ~390 members of a
 * 100,000-member group's bucket that did not change when one of them did. Every column counts
 * but those saying how the row was read (HOW_READ).
 */
function keepUnchangedRows(before: readonly SubscriptionRow[] | undefined, rows: SubscriptionRow[]): SubscriptionRow[] {
  if (!before?.length) return rows;
  const byId = new Map(before.map((r) => [r.id, r]));
  return rows.map((r) => {
    const old = byId.get(r.id);
    return old && sameColumns(old, r) ? old : r;
  });
}

function sameColumns(a: SubscriptionRow, b: SubscriptionRow): boolean {
  const x = a as unknown as Record<string, unknown>;
  const y = b as unknown as Record<string, unknown>;
  for (const k of Object.keys(y)) if (!HOW_READ.has(k) && x[k] !== y[k]) return false;
  for (const k of Object.keys(x)) if (!HOW_READ.has(k) && !(k in y)) return false;
  return true;
}

/**
 * Columns that say how a row was read, not what the member is: its hash (read with a group read
 * whole) and its group (left out when one group was read whole; a bucket is one group's either way).
 */
const HOW_READ = new Set(['hash', 'access_group_id']);

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

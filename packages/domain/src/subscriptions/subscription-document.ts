import type { ClientStatus, Db, Protocol, SubscriptionStatus } from '@svc/db';
import { sql } from 'kysely';
import type { StoredStream } from '../inbound-profiles/stream.ts';
import type { DomainContext } from '../shared/context.ts';
import { linkTokenHash, shadowsocksPassword } from './credentials.ts';
import { currentStatus, linkStatus, subscriptionServes } from './subscription-status.ts';

/** What a client app may connect to (the shape @svc/sub-formats renders; see its src/model.ts). */
export interface SubscriptionServer {
  name: string;
  protocol: Protocol;
  address: string;
  port: number;
  uuid?: string;
  flow?: string;
  password?: string;
  method?: string;
  stream: {
    network: StoredStream['network'];
    security: StoredStream['security'];
    ws?: { path: string; host: string };
    grpc?: { service_name: string; multi_mode: boolean };
    httpupgrade?: { path: string; host: string };
    xhttp?: { path: string; host: string; mode: 'auto' | 'packet_up' | 'stream_up' | 'stream_one' };
    tls?: { sni: string; alpn: string[]; fingerprint: string; allow_insecure: boolean };
    reality?: { sni: string; public_key: string; short_id: string; fingerprint: string; spider_x: string };
  };
}

/** Everything GET /sub/{token} shows: the subscription's state and, when it serves, its servers. */
export interface SubscriptionDocumentData {
  subscription_id: string;
  client_email: string;
  /** As of the read (an expiry or a limit reached counts before a sweep writes it down). */
  status: SubscriptionStatus;
  client_status: ClientStatus;
  /** What the link shows its apps (linkStatus): the status, or the client's state when it is not active. */
  link_status: SubscriptionStatus | 'pending';
  /** This period's traffic, each direction (counted by the usage ingest, reset with the period). */
  upload_bytes: number;
  download_bytes: number;
  traffic_limit_bytes: number | null;
  expires_at: Date | null;
  /** Empty unless the subscription serves (active, client active). */
  servers: SubscriptionServer[];
}

/** Link tokens are 32 random bytes, base64url: anything else is not one (and costs no read). */
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

type Granted = (groupIds: readonly string[]) => Promise<readonly GrantedInbound[]>;

/**
 * The subscription a link token names, with what its apps need; null when no subscription
 * has this token (never issued, or rotated away). The token is looked up by its SHA-256
 * (an index probe whose time does not depend on how close a guess is to a real token).
 */
export async function readSubscriptionDocument(
  ctx: Pick<DomainContext, 'db' | 'clock'>,
  token: string,
  granted: Granted = (ids) => readGrantedInbounds(ctx.db, ids),
): Promise<SubscriptionDocumentData | null> {
  return (await readSubscriptionDocuments(ctx, [token], granted)).get(token) ?? null;
}

/**
 * readSubscriptionDocument for several tokens in one statement (the portal gathers the
 * requests of one event-loop turn): each token maps to its document or null.
 */
export async function readSubscriptionDocuments(
  ctx: Pick<DomainContext, 'db' | 'clock'>,
  tokens: readonly string[],
  granted: Granted = (ids) => readGrantedInbounds(ctx.db, ids),
): Promise<Map<string, SubscriptionDocumentData | null>> {
  const out = new Map<string, SubscriptionDocumentData | null>(tokens.map((t) => [t, null]));
  const byHash = new Map<string, string>();
  for (const t of tokens) if (TOKEN_RE.test(t)) byHash.set(linkTokenHash(t), t);
  if (byHash.size === 0) return out;
  // One short statement, prepared once per connection on PostgreSQL: the subscriptions and
  // their clients, this period's traffic and the ids of their access groups. What those
  // groups grant comes from `granted` (a cache in the portal; readGrantedInbounds by default).
  const result = await sql<DocumentRow>`/* prepared:sub_link_documents */
    select s.token_hash, s.id, s.status, sc.used_bytes, s.traffic_limit_bytes, s.expires_at,
           s.vless_uuid, s.vmess_uuid, s.trojan_password, s.shadowsocks_password,
           c.status as client_status, c.email as client_email,
           sc.period_uplink_bytes as up, sc.period_downlink_bytes as down,
           array(select sag.access_group_id from subscription_access_groups sag
                  where sag.subscription_id = s.id order by sag.access_group_id) as group_ids
      from subscriptions s
      join subscription_counters sc on sc.subscription_id = s.id
      join clients c on c.id = s.client_id
     where s.token_hash = any(${[...byHash.keys()]}::text[])`.execute(ctx.db);
  const now = ctx.clock.now();
  for (const row of result.rows) {
    const token = byHash.get(row.token_hash);
    if (token === undefined) continue;
    const sub = {
      ...row,
      used_bytes: Number(row.used_bytes),
      traffic_limit_bytes: row.traffic_limit_bytes === null ? null : Number(row.traffic_limit_bytes),
      expires_at: row.expires_at === null ? null : new Date(row.expires_at),
    };
    const status = currentStatus(sub, now);
    out.set(token, {
      subscription_id: sub.id,
      client_email: sub.client_email,
      status,
      client_status: sub.client_status,
      link_status: linkStatus(status, sub.client_status),
      upload_bytes: Number(row.up),
      download_bytes: Number(row.down),
      traffic_limit_bytes: sub.traffic_limit_bytes,
      expires_at: sub.expires_at,
      servers: subscriptionServes(status, sub.client_status) ? memoizedServers(await granted(row.group_ids), sub) : NO_SERVERS,
    });
  }
  return out;
}

/**
 * The inbounds these access groups grant on enabled nodes not limited by their traffic quota,
 * each once, by node name then tag:
 * the same for every subscription with these groups (credentials are added per subscription).
 */
export async function readGrantedInbounds(db: Db, groupIds: readonly string[]): Promise<GrantedInbound[]> {
  if (groupIds.length === 0) return [];
  const rows = await db
    .selectFrom('access_group_inbounds as agi')
    .innerJoin('inbounds as i', 'i.id', 'agi.inbound_id')
    .innerJoin('inbound_profiles as p', 'p.id', 'i.profile_id')
    .innerJoin('nodes as n', 'n.id', 'i.node_id')
    .select([
      'i.id',
      'i.tag',
      'i.port',
      'i.host',
      'n.name as node_name',
      'n.address',
      'p.name as profile_name',
      'p.protocol',
      'p.stream',
      'p.vless_flow',
      'p.shadowsocks_method',
      'p.shadowsocks_server_key',
    ])
    .where('agi.access_group_id', 'in', groupIds)
    .where('n.admin_status', '=', 'enabled')
    // A node limited by its traffic quota serves none of its inbounds (nodes/node-traffic.ts).
    .where('n.traffic_limited_at', 'is', null)
    .orderBy('n.name')
    .orderBy('i.tag')
    .execute();
  const seen = new Set<string>();
  return rows.flatMap((r) => {
    if (seen.has(r.id)) return [];
    seen.add(r.id);
    return [r];
  });
}

/** An inbound some access groups grant, as the link shows it (GET /sub/{token}). */
export interface GrantedInbound {
  id: string;
  tag: string;
  port: number;
  host: string | null;
  node_name: string;
  address: string;
  profile_name: string;
  protocol: Protocol;
  stream: StoredStream;
  vless_flow: string | null;
  shadowsocks_method: string | null;
  shadowsocks_server_key: string | null;
}

interface DocumentRow extends Credentials {
  token_hash: string;
  id: string;
  status: SubscriptionStatus;
  used_bytes: string | number;
  traffic_limit_bytes: string | number | null;
  expires_at: Date | string | null;
  client_status: ClientStatus;
  client_email: string;
  up: string | number;
  down: string | number;
  group_ids: string[];
}

const NO_SERVERS: SubscriptionServer[] = Object.freeze([]) as unknown as SubscriptionServer[];

/**
 * The servers of one granted list for one set of credentials, kept as long as that list is
 * (the portal's grant cache holds it until what the groups grant changes): an app refreshing
 * its link gets the same array again, and the portal renders each array once per format.
 * Frozen: shared between requests. Bounded per granted list.
 */
const serversMemo = new WeakMap<readonly GrantedInbound[], Map<string, SubscriptionServer[]>>();
const MAX_MEMO_PER_LIST = 20_000;
function memoizedServers(granted: readonly GrantedInbound[], sub: Credentials): SubscriptionServer[] {
  let bySub = serversMemo.get(granted);
  if (!bySub) {
    bySub = new Map();
    serversMemo.set(granted, bySub);
  }
  const key = `${sub.vless_uuid}\0${sub.vmess_uuid}\0${sub.trojan_password}\0${sub.shadowsocks_password}`;
  let servers = bySub.get(key);
  if (!servers) {
    if (bySub.size >= MAX_MEMO_PER_LIST) bySub.clear();
    servers = Object.freeze(serversOf(granted, sub)) as SubscriptionServer[];
    bySub.set(key, servers);
  }
  return servers;
}

interface Credentials {
  vless_uuid: string;
  vmess_uuid: string;
  trojan_password: string;
  shadowsocks_password: string;
}

/**
 * The granted inbounds (each once; on enabled nodes not limited by quota; by node name, then tag) as servers.
 * Address: the inbound's host, else its node's address (a chain's entry inbound runs on the
 * chain's first hop, so its clients connect there).
 */
function serversOf(granted: readonly GrantedInbound[], sub: Credentials): SubscriptionServer[] {
  const names = new Set<string>();
  const out: SubscriptionServer[] = [];
  for (const r of granted) {
    let name = `${r.node_name} · ${r.profile_name}`;
    if (names.has(name)) name = `${name} :${r.port}`;
    names.add(name);
    const host = r.host ?? '';
    out.push({
      name,
      protocol: r.protocol,
      address: host || r.address,
      port: r.port,
      ...credentialsFor(r, sub),
      stream: clientStream(r.stream, host),
    });
  }
  return out;
}

function credentialsFor(
  r: { protocol: Protocol; vless_flow: string | null; shadowsocks_method: string | null; shadowsocks_server_key: string | null },
  sub: Credentials,
): Pick<SubscriptionServer, 'uuid' | 'flow' | 'password' | 'method'> {
  switch (r.protocol) {
    case 'vless':
      return { uuid: sub.vless_uuid, flow: r.vless_flow ?? '' };
    case 'vmess':
      return { uuid: sub.vmess_uuid };
    case 'trojan':
      return { password: sub.trojan_password };
    case 'shadowsocks': {
      const method = r.shadowsocks_method ?? '';
      return { method, password: shadowsocksPassword(method, r.shadowsocks_server_key, sub.shadowsocks_password) };
    }
  }
}

/** The client's side of the inbound's stream: what the app must send (SNI, Host, keys it may know). */
function clientStream(s: StoredStream, host: string): SubscriptionServer['stream'] {
  const out: SubscriptionServer['stream'] = { network: s.network, security: s.security };
  if (s.ws) out.ws = { path: s.ws.path, host: s.ws.headers.Host ?? s.ws.headers.host ?? host };
  if (s.grpc) out.grpc = { service_name: s.grpc.service_name, multi_mode: s.grpc.multi_mode };
  if (s.httpupgrade) out.httpupgrade = { path: s.httpupgrade.path, host: s.httpupgrade.host || host };
  if (s.xhttp) out.xhttp = { path: s.xhttp.path, host: s.xhttp.host || host, mode: s.xhttp.mode };
  if (s.security === 'tls' && s.tls) {
    out.tls = {
      sni: s.tls.server_names[0] ?? host,
      alpn: s.tls.alpn ? s.tls.alpn.split(',').map((a) => a.trim()) : [],
      fingerprint: 'chrome',
      allow_insecure: false,
    };
  }
  if (s.security === 'reality' && s.reality) {
    out.reality = {
      sni: s.reality.server_names[0] ?? '',
      public_key: s.reality.public_key,
      short_id: s.reality.short_ids[0] ?? '',
      fingerprint: s.reality.fingerprint,
      spider_x: '',
    };
  }
  return out;
}

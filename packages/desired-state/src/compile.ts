import { engineRunsInbound, shadowsocksPassword, sniffingFor } from '@svc/domain';
import {
  chainEmail,
  type Inbound,
  type InboundUser,
  Network,
  type NodeConfig,
  type Outbound,
  Protocol,
  type RoutingRule,
  SecurityT,
  type StreamSettings,
  type UserLimits,
  XhttpMode,
} from '@svc/proto';
import type { ModelChain, ModelInbound, ModelSlice, NodeModel } from './model.ts';
import { byString, type ServingMember, servingMembersOf } from './serving-members.ts';

export { hasUserLimits, type ServingMember } from './serving-members.ts';

/** Cipher of chain links between hops (Shadowsocks AEAD; Xray and v2ray both speak it). */
export const CHAIN_METHOD = 'chacha20-ietf-poly1305';
export const DIRECT = 'direct';
export const BLOCK = 'block';
export const chainInTag = (chainId: string) => `chain-in-${chainId}`;
export const chainOutTag = (chainId: string) => `chain-out-${chainId}`;
// The email format is the wire contract's (@svc/proto user-email.ts): written here, read by the agent.
export { chainEmail, userEmail } from '@svc/proto';

const NETWORK: Record<string, Network> = {
  tcp: Network.TCP,
  ws: Network.WS,
  grpc: Network.GRPC,
  httpupgrade: Network.HTTPUPGRADE,
  xhttp: Network.XHTTP,
};
const SECURITY: Record<string, SecurityT> = { none: SecurityT.NONE, tls: SecurityT.TLS, reality: SecurityT.REALITY };
const PROTOCOL: Record<string, Protocol> = {
  vless: Protocol.VLESS,
  vmess: Protocol.VMESS,
  trojan: Protocol.TROJAN,
  shadowsocks: Protocol.SHADOWSOCKS,
};
const XHTTP: Record<string, XhttpMode> = {
  auto: XhttpMode.AUTO,
  packet_up: XhttpMode.PACKET_UP,
  stream_up: XhttpMode.STREAM_UP,
  stream_one: XhttpMode.STREAM_ONE,
};

function streamOf(i: ModelInbound): StreamSettings {
  const s = i.stream;
  const out: StreamSettings = { network: NETWORK[s.network] ?? Network.TCP, security: SECURITY[s.security] ?? SecurityT.NONE };
  if (s.tcp) out.tcp = { acceptProxyProtocol: s.tcp.accept_proxy_protocol };
  if (s.ws) out.ws = { path: s.ws.path, headers: Object.fromEntries(Object.entries(s.ws.headers).sort(([a], [b]) => byString(a, b))) };
  if (s.grpc) out.grpc = { serviceName: s.grpc.service_name, multiMode: s.grpc.multi_mode };
  if (s.httpupgrade) out.httpupgrade = { path: s.httpupgrade.path, host: s.httpupgrade.host };
  if (s.xhttp) out.xhttp = { path: s.xhttp.path, host: s.xhttp.host, mode: XHTTP[s.xhttp.mode] ?? XhttpMode.AUTO };
  if (s.security === 'tls' && s.tls)
    out.tlsSettings = {
      serverNames: [...s.tls.server_names],
      alpn: s.tls.alpn,
      minVersion: s.tls.min_version,
      certificateId: s.tls.certificate_id,
    };
  if (s.security === 'reality' && s.reality)
    out.reality = {
      dest: s.reality.dest,
      serverNames: [...s.reality.server_names],
      privateKey: i.reality_private_key ?? '',
      publicKey: s.reality.public_key,
      shortIds: [...s.reality.short_ids],
      fingerprint: s.reality.fingerprint,
    };
  return out;
}

const plainTcp = (): StreamSettings => ({ network: Network.TCP, security: SecurityT.NONE, tcp: { acceptProxyProtocol: false } });

/**
 * Until when compileNodeConfig(m) stays what it is for a later clock reading, in epoch
 * milliseconds (Infinity: for as long as the revision stands). The clock is the one input of the
 * compile that moves without a new revision (a subscription's expiry passing before the sweep
 * writes it down: storedStatusAsOf); the earliest expiry still ahead of a member it serves ends it.
 */
export function compiledUntilMs(m: NodeModel): number {
  // Only a member the node serves now leaves the config when its expiry passes (a limited one,
  // or one of a disabled client, serves nobody before or after): serving-members.ts.
  return servingMembersOf(m.subscriptions, m.now).untilMs;
}

/**
 * Spec 2.1 NodeConfig for one node, from its model. Pure and deterministic: inbounds by tag,
 * users by email, outbounds direct, block, then chain links by chain id, routing rules in
 * first-match order (bittorrent to block, chains, then each remaining inbound to direct),
 * certificates by id, user limits by subscription id (userLimitsOf). The same model always
 * gives byte-identical encoded output.
 *
 * Users of an inbound: every subscription granted it (through an access group) that serves
 * now: its status as of the snapshot's clock is active, and its client is active.
 *
 * For the node's engine (m.engine; the rules are packages/domain's engine-capabilities.ts):
 * sniffing keeps the destinations the engine accepts, and an inbound the engine cannot load
 * without users (V2Ray's Shadowsocks) is left out, with its routing, until it has one.
 */
export function compileNodeConfig(m: NodeModel): NodeConfig {
  return fillParts(compileParts(m), m);
}

/** The config of compileParts with its members filled in as objects (compileNodeConfig). */
export function fillParts(parts: CompiledParts, m: NodeModel): NodeConfig {
  const inbounds = parts.config.xray?.inbounds ?? [];
  for (const { at, inbound, members } of parts.users) {
    const target = inbounds[at] as Inbound;
    target.users = members.map(({ email, sub }) => userOf(inbound, email, sub));
  }
  parts.config.userLimits = userLimitsOf(parts.limited, m.slices);
  return parts.config;
}

/**
 * compileNodeConfig in two parts: the config without the members (the users of the model's
 * inbounds and the user limits left empty) and the members to put in it: each inbound's users
 * (`at`: its index in config.xray.inbounds; in email order) and every serving member (in email
 * order, for the user limits). compileNodeConfig fills them in as objects; encode-desired-state.ts
 * encodes them in runs kept from the compile before.
 */
export interface CompiledParts {
  config: NodeConfig;
  /** Each inbound's users; inbounds granted to the same members may share one array (never change them). */
  users: Array<{ at: number; inbound: ModelInbound; members: readonly ServingMember[] }>;
  serving: readonly ServingMember[];
  /** The serving members with a user_limits entry (hasUserLimits), by subscription id. */
  limited: readonly NodeModel['subscriptions'][number][];
}

export function compileParts(m: NodeModel): CompiledParts {
  // The serving subscriptions in email order (the stored status as of the snapshot's clock: an
  // expiry passed since the last write counts before the sweep writes it down; a limit reached is
  // stored by the credit that reached it), kept with the members array: serving-members.ts.
  const { serving, limited, sharedInboundIds } = servingMembersOf(m.subscriptions, m.now);
  // Each inbound's users keep that order.
  const usersByInbound = new Map<string, readonly ServingMember[]>();
  if (sharedInboundIds && new Set(sharedInboundIds).size === sharedInboundIds.length) {
    // Every member granted the same inbounds (one access group): each inbound's users are all of them.
    for (const id of sharedInboundIds) usersByInbound.set(id, serving);
  } else {
    const listOf = (inboundId: string) => {
      let list = usersByInbound.get(inboundId) as ServingMember[] | undefined;
      if (!list) {
        list = [];
        usersByInbound.set(inboundId, list);
      }
      return list;
    };
    // Members of one access group share their inbound list (one array): its lists are looked up once per run.
    let ids: readonly string[] | undefined;
    let lists: ServingMember[][] = [];
    for (const user of serving) {
      if (user.sub.inbound_ids !== ids) {
        ids = user.sub.inbound_ids;
        lists = ids.map(listOf);
      }
      for (const list of lists) list.push(user);
    }
  }

  const inbounds: Inbound[] = [];
  const users: CompiledParts['users'] = [];
  const rules: { block: RoutingRule[]; chain: RoutingRule[]; direct: RoutingRule[] } = { block: [], chain: [], direct: [] };
  const outbounds: Outbound[] = [
    { tag: DIRECT, protocol: Protocol.FREEDOM, address: '', port: 0, stream: undefined },
    { tag: BLOCK, protocol: Protocol.BLACKHOLE, address: '', port: 0, stream: undefined },
  ];

  for (const i of [...m.inbounds].sort((a, b) => byString(a.tag, b.tag))) {
    const members = usersByInbound.get(i.id) ?? [];
    if (!engineRunsInbound(m.engine, i.protocol, members.length)) continue;
    const sniffing = sniffingFor(i.sniffing, m.engine);
    users.push({ at: inbounds.length, inbound: i, members });
    inbounds.push({
      tag: i.tag,
      protocol: PROTOCOL[i.protocol] ?? Protocol.PROTOCOL_UNSPECIFIED,
      port: i.port,
      listen: i.listen ?? '',
      stream: streamOf(i),
      sniffing: { enabled: sniffing.enabled, destOverride: [...sniffing.dest_override], routeOnly: sniffing.route_only },
      users: [],
    });
    if (i.block_bittorrent) rules.block.push({ inboundTag: i.tag, outboundTag: BLOCK, protocols: ['bittorrent'] });
    const chain = i.chain_id ? m.chains.find((c) => c.id === i.chain_id) : undefined;
    if (chain && chain.hops.length > 1 && chain.hops[0]?.node_id === m.node_id)
      rules.chain.push({ inboundTag: i.tag, outboundTag: chainOutTag(chain.id), protocols: [] });
    else rules.direct.push({ inboundTag: i.tag, outboundTag: DIRECT, protocols: [] });
  }

  for (const chain of [...m.chains].sort((a, b) => byString(a.id, b.id))) chainParts(m.node_id, chain, inbounds, outbounds, rules.chain);

  const certificates = [...m.certificates]
    .sort((a, b) => byString(a.id, b.id))
    .map((c) => ({ id: c.id, certPem: c.cert_pem, keyPem: c.key_pem }));
  return {
    config: {
      xray: { inbounds, outbounds, routingRules: [...rules.block, ...rules.chain, ...rules.direct] },
      certificates,
      userLimits: [],
    },
    users,
    serving,
    limited,
  };
}

/**
 * NodeConfig.user_limits (issue 36; docs/limits.md): one entry per serving subscription that has
 * any of a device limit, a speed cap, an expiry (not_after_ms: expires_at, the instant the status
 * rule makes it expired) or a traffic limit (its slice on this node: slice_id 0 when the node has
 * none for it, i.e. unmetered here), by subscription id. Nothing else is in it: a subscription
 * without an entry is bound by none of them on the node.
 */
function userLimitsOf(limited: readonly NodeModel['subscriptions'][number][], slices: NodeModel['slices']): UserLimits[] {
  const out: UserLimits[] = [];
  for (const sub of limited) {
    const slice = sliceOf(sub, slices);
    // A member the member cache kept is the same object from snapshot to snapshot: its entry is
    // made once (five BigInts and an object: ~0.7 µs, 70 ms on a 100,000-user node) while its
    // slice stays the same. Entries are only read (encoded), never changed, so sharing them
    // between compilations keeps this function pure.
    const kept = limitsOf.get(sub);
    if (kept && kept.slice_id === slice?.slice_id && kept.slice_bytes === slice?.slice_bytes) {
      out.push(kept.limits);
      continue;
    }
    const limits = userLimitOf(sub, slice);
    limitsOf.set(sub, { slice_id: slice?.slice_id, slice_bytes: slice?.slice_bytes, limits });
    out.push(limits);
  }
  return out;
}

/** A member's traffic slice on the node (none without a traffic limit: unmetered). */
export const sliceOf = (sub: NodeModel['subscriptions'][number], slices: NodeModel['slices']): ModelSlice | undefined =>
  sub.traffic_limit_bytes === null ? undefined : slices?.get(sub.id);

/** A member's user_limits entry with its slice on the node. */
export function userLimitOf(sub: NodeModel['subscriptions'][number], slice: ModelSlice | undefined): UserLimits {
  const device = sub.device_limit ?? null;
  const up = sub.upload_bps ?? null;
  const down = sub.download_bps ?? null;
  return {
    subscriptionId: sub.id,
    deviceLimit: device ?? 0,
    uploadBps: up === null ? 0n : BigInt(up),
    downloadBps: down === null ? 0n : BigInt(down),
    notAfterMs: sub.expires_at === null ? 0n : BigInt(sub.expires_at.getTime()),
    sliceId: slice === undefined ? 0n : BigInt(slice.slice_id),
    sliceBytes: slice === undefined ? 0n : BigInt(slice.slice_bytes),
  };
}

/** Each member's UserLimits entry with the slice it was made with (userLimitsOf). */
const limitsOf = new WeakMap<NodeModel['subscriptions'][number], { slice_id?: string; slice_bytes?: string; limits: UserLimits }>();

/** An inbound's user for a serving member. */
export function userOf(i: ModelInbound, email: string, sub: NodeModel['subscriptions'][number]): InboundUser {
  switch (i.protocol) {
    case 'vless':
      return { email, vless: { id: sub.vless_uuid, flow: i.vless_flow ?? '' } };
    case 'vmess':
      return { email, vmess: { id: sub.vmess_uuid } };
    case 'trojan':
      return { email, trojan: { password: sub.trojan_password } };
    case 'shadowsocks': {
      const method = i.shadowsocks_method ?? '';
      return { email, shadowsocks: { method, password: shadowsocksPassword(method, i.shadowsocks_server_key, sub.shadowsocks_password) } };
    }
  }
}

/** This node's part of a chain: chain-in on hops after the first, a link to the next hop on all but the last. */
function chainParts(nodeId: string, chain: ModelChain, inbounds: Inbound[], outbounds: Outbound[], rules: RoutingRule[]): void {
  const hops = [...chain.hops].sort((a, b) => a.position - b.position);
  const k = hops.findIndex((h) => h.node_id === nodeId);
  if (k < 0 || hops.length < 2) return;
  const me = hops[k] as (typeof hops)[number];
  const next = hops[k + 1];
  if (k > 0) {
    inbounds.push({
      tag: chainInTag(chain.id),
      protocol: Protocol.SHADOWSOCKS,
      port: me.port,
      listen: '',
      stream: plainTcp(),
      sniffing: { enabled: false, destOverride: [], routeOnly: false },
      users: [{ email: chainEmail(chain.id, k), shadowsocks: { method: CHAIN_METHOD, password: me.secret } }],
    });
    rules.push({ inboundTag: chainInTag(chain.id), outboundTag: next ? chainOutTag(chain.id) : DIRECT, protocols: [] });
  }
  if (next) {
    outbounds.push({
      tag: chainOutTag(chain.id),
      protocol: Protocol.SHADOWSOCKS,
      address: next.address,
      port: next.port,
      shadowsocks: { method: CHAIN_METHOD, password: next.secret },
      stream: plainTcp(),
    });
  }
}

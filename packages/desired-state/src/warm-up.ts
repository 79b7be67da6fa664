import type { Protocol } from '@svc/db';
import type { NodeConfig } from '@svc/proto';
import { compileNodeConfig } from './compile.ts';
import { type InboundRow, keepReadWhole, modelsOfSnapshot, type SubscriptionRow } from './load-model.ts';
import { MemberCache } from './member-cache.ts';
import type { ModelInbound, NodeModel } from './model.ts';

/**
 * Runs the code a push of a big node runs after its snapshot is read (the member cache's
 * buckets and digests, the models in id order, the compiler) over a made-up node of `users`
 * members on an inbound of each protocol, and returns its config for the caller to encode and
 * compress. Nothing is read or kept: the cache is a throwaway one and the rows are made here.
 *
 * Why: a process runs this code cold the first time a big node is pushed, in V8's interpreter
 * and baseline tiers until its loops are optimised, and that first push took ~40% longer
 * than the next one (bench/BENCHMARKS.md, 2026-11-28). A gateway that has pushed other big
 * nodes has it optimised already; one that just started has not, so it runs this once at start
 * (grpc.warm_up_users).
 */
export async function warmUpPushPath(users: number): Promise<NodeConfig> {
  const protocols: Protocol[] = ['vless', 'vmess', 'trojan', 'shadowsocks'];
  const inbounds: InboundRow[] = protocols.map((protocol, k) => warmInbound(protocol, k));
  const rows: SubscriptionRow[] = [];
  for (let i = 0; i < users; i++) rows.push(warmRow(i));
  const members = new MemberCache<SubscriptionRow>({ maxRows: users, minGroupRows: 1 });
  const chunks = keepReadWhole(members, WARM_GROUP, protocols.join(','), rows);
  let model: NodeModel | undefined;
  await modelsOfSnapshot(
    {
      nodes: [{ id: WARM_NODE, desired_revision: '1' }],
      now: new Date(),
      inbounds,
      grants: inbounds.map((i) => ({ access_group_id: WARM_GROUP, inbound_id: i.id })),
      subscriptions: new Map([[WARM_GROUP, chunks]]),
      chains: [],
      certificates: [],
    },
    [WARM_NODE],
    members,
    (m) => {
      model = m;
    },
  );
  if (!model) throw new Error('warm-up made no model');
  return compileNodeConfig(model);
}

const WARM_NODE = 'node_warm_up';
const WARM_GROUP = 'ag_warm_up';

function warmInbound(protocol: Protocol, k: number): InboundRow {
  const ws = k % 2 === 1;
  return {
    id: `ib_warm_up_${k}`,
    node_id: WARM_NODE,
    tag: `warm-${protocol}`,
    port: 10_000 + k,
    listen: null,
    chain_id: null,
    protocol,
    stream: (ws
      ? { network: 'ws', security: 'none', ws: { path: `/warm-${k}`, headers: {} } }
      : { network: 'tcp', security: 'none' }) as ModelInbound['stream'],
    reality_private_key: null,
    sniffing: { enabled: true, dest_override: ['http', 'tls'], route_only: false },
    vless_flow: protocol === 'vless' ? '' : null,
    shadowsocks_method: protocol === 'shadowsocks' ? 'chacha20-ietf-poly1305' : null,
    shadowsocks_server_key: null,
    block_bittorrent: k === 0,
  };
}

/** A member as the driver hands one over (the loader's column order, int8 as text). */
function warmRow(i: number): SubscriptionRow {
  const n = String(i).padStart(26, '0');
  const hex = (i * 2654435761).toString(16).padStart(12, '0').slice(-12);
  return {
    id: `sub_${n}`,
    used_bytes: String(i * 1024),
    traffic_limit_bytes: i % 3 === 0 ? null : String(2 ** 40),
    expires_ms: i % 5 === 0 ? null : Date.now() + 86_400_000 + i,
    vless_uuid: `00000000-0000-4000-8000-${hex}`,
    vmess_uuid: `11111111-1111-4111-8111-${hex}`,
    trojan_password: `warm-trojan-${n}`,
    shadowsocks_password: `warm-ss-${n}`,
    access_group_id: WARM_GROUP,
    bucket: i & 255,
    hash: String(BigInt.asIntN(64, BigInt(i) * 0x9e3779b97f4a7c15n)),
  };
}

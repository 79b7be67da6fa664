import type { Db } from '@svc/db';
import type { DomainDeps } from '@svc/domain';
import type { ModelChain, ModelInbound, ModelSubscription, NodeModel } from './model.ts';

/**
 * Reads everything node `nodeId` runs, together with its desired revision, in one
 * REPEATABLE READ transaction: the revision names exactly the state the config is compiled
 * from (a change committed meanwhile has a higher revision and is sent next). Null when the
 * node does not exist.
 */
export async function loadNodeModel(deps: Pick<DomainDeps, 'db' | 'clock' | 'secrets'>, nodeId: string): Promise<NodeModel | null> {
  return deps.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const node = await trx.selectFrom('nodes').select(['id', 'desired_revision']).where('id', '=', nodeId).executeTakeFirst();
      if (!node) return null;
      const now = deps.clock.now();
      const inbounds = await readInbounds(trx, deps, nodeId);
      const [subscriptions, chains, certificates] = [
        await readSubscriptions(
          trx,
          inbounds.map((i) => i.id),
        ),
        await readChains(trx, deps, nodeId),
        await readCertificates(trx, deps, inbounds),
      ];
      return { node_id: nodeId, revision: Number(node.desired_revision), now, inbounds, subscriptions, chains, certificates };
    });
}

async function readInbounds(trx: Db, deps: Pick<DomainDeps, 'secrets'>, nodeId: string): Promise<ModelInbound[]> {
  const rows = await trx
    .selectFrom('inbounds as i')
    .innerJoin('inbound_profiles as p', 'p.id', 'i.profile_id')
    .select([
      'i.id',
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
    .where('i.node_id', '=', nodeId)
    .orderBy('i.tag')
    .execute();
  return rows.map((r) => ({
    id: r.id,
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

/**
 * Subscriptions granted any of these inbounds: one row per (subscription, inbound) grant,
 * grouped here (an SQL array_agg over 100,000 subscriptions costs twice the plain rows; see
 * bench/BENCHMARKS.md). Stored status active only: the compiler re-checks expiry and limit
 * against the snapshot's clock, and a limited, expired or disabled row serves nobody.
 */
async function readSubscriptions(trx: Db, inboundIds: readonly string[]): Promise<ModelSubscription[]> {
  if (inboundIds.length === 0) return [];
  const rows = await trx
    .selectFrom('access_group_inbounds as agi')
    .innerJoin('subscription_access_groups as sag', 'sag.access_group_id', 'agi.access_group_id')
    .innerJoin('subscriptions as s', 's.id', 'sag.subscription_id')
    .innerJoin('clients as c', 'c.id', 's.client_id')
    .select([
      's.id',
      's.status',
      's.used_bytes',
      's.traffic_limit_bytes',
      's.expires_at',
      'c.status as client_status',
      's.vless_uuid',
      's.vmess_uuid',
      's.trojan_password',
      's.shadowsocks_password',
      'agi.inbound_id',
    ])
    .where('agi.inbound_id', 'in', inboundIds)
    .where('s.status', '=', 'active')
    .where('c.status', '=', 'active')
    .execute();
  const byId = new Map<string, ModelSubscription>();
  for (const r of rows) {
    const seen = byId.get(r.id);
    if (seen) {
      if (!seen.inbound_ids.includes(r.inbound_id)) seen.inbound_ids.push(r.inbound_id);
      continue;
    }
    byId.set(r.id, {
      id: r.id,
      status: r.status,
      used_bytes: Number(r.used_bytes),
      traffic_limit_bytes: r.traffic_limit_bytes === null ? null : Number(r.traffic_limit_bytes),
      expires_at: r.expires_at,
      client_status: r.client_status,
      vless_uuid: r.vless_uuid,
      vmess_uuid: r.vmess_uuid,
      trojan_password: r.trojan_password,
      shadowsocks_password: r.shadowsocks_password,
      inbound_ids: [r.inbound_id],
    });
  }
  // The compiler orders users itself; ids sorted here keep the model itself deterministic.
  return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Chains this node is a hop of, or whose entry inbounds it runs, with every hop's address and (opened) secret. */
async function readChains(trx: Db, deps: Pick<DomainDeps, 'secrets'>, nodeId: string): Promise<ModelChain[]> {
  const asHop = await trx.selectFrom('chain_hops').select('chain_id').where('node_id', '=', nodeId).execute();
  const asEntry = await trx
    .selectFrom('inbounds')
    .select('chain_id')
    .where('node_id', '=', nodeId)
    .where('chain_id', 'is not', null)
    .execute();
  const chainIds = [...new Set([...asHop, ...asEntry].map((r) => r.chain_id as string))];
  if (chainIds.length === 0) return [];
  const hops = await trx
    .selectFrom('chain_hops as h')
    .innerJoin('nodes as n', 'n.id', 'h.node_id')
    .select(['h.chain_id', 'h.position', 'h.node_id', 'n.address', 'h.port', 'h.secret'])
    .where('h.chain_id', 'in', chainIds)
    .orderBy('h.chain_id')
    .orderBy('h.position')
    .execute();
  return chainIds.sort().map((id) => ({
    id,
    hops: hops
      .filter((h) => h.chain_id === id)
      .map((h) => ({ position: h.position, node_id: h.node_id, address: h.address, port: h.port, secret: deps.secrets.open(h.secret) })),
  }));
}

async function readCertificates(trx: Db, deps: Pick<DomainDeps, 'secrets'>, inbounds: readonly ModelInbound[]) {
  const ids = [...new Set(inbounds.flatMap((i) => (i.stream.security === 'tls' && i.stream.tls ? [i.stream.tls.certificate_id] : [])))];
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

import type { Db } from '@svc/db';
import type { DomainDeps } from '@svc/domain';
import { sql } from 'kysely';
import type { ModelChain, ModelInbound, NodeModel } from './model.ts';

/** The fleet rows of a snapshot's nodes: their inbounds, the groups that grant them, their chains and certificates. */

export type InboundRow = ModelInbound & { node_id: string };

/**
 * The inbounds these nodes run: all of a node's, except while it is limited by its traffic
 * quota (issue 35.4, nodes/node-traffic.ts): then none, and with them go their users, their
 * certificates and what their groups grant. Chain hops through the node stay (readChains).
 */
export async function readInbounds(trx: Db, deps: Pick<DomainDeps, 'secrets'>, nodeIds: readonly string[]): Promise<InboundRow[]> {
  const rows = await trx
    .selectFrom('inbounds as i')
    .innerJoin('inbound_profiles as p', 'p.id', 'i.profile_id')
    .innerJoin('nodes as n', 'n.id', 'i.node_id')
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
    // The ids as one array, on both sides of the join: PostgreSQL reads the nodes by their key
    // (with a list of 250 parameters it scanned every node, ~8 ms a snapshot of 250 in the
    // 10,000-node fan-out, and planned each call anew).
    .where(sql<boolean>`i.node_id = any(${[...nodeIds]}::text[])`)
    .where(sql<boolean>`n.id = any(${[...nodeIds]}::text[])`)
    .where('n.traffic_limited_at', 'is', null)
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
    stream: r.stream,
    reality_private_key: r.reality_private_key_enc ? deps.secrets.open(r.reality_private_key_enc) : null,
    sniffing: r.sniffing,
    vless_flow: r.vless_flow,
    shadowsocks_method: r.shadowsocks_method,
    shadowsocks_server_key: r.shadowsocks_server_key,
    block_bittorrent: r.block_bittorrent,
  }));
}

/** Which access groups grant which of these inbounds. */
export async function readGrants(trx: Db, inboundIds: readonly string[]): Promise<Array<{ access_group_id: string; inbound_id: string }>> {
  if (inboundIds.length === 0) return [];
  return trx
    .selectFrom('access_group_inbounds')
    .select(['access_group_id', 'inbound_id'])
    .where(sql<boolean>`inbound_id = any(${[...inboundIds]}::text[])`)
    .orderBy('access_group_id')
    .orderBy('inbound_id')
    .execute();
}

export function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
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
export async function readChains(
  trx: Db,
  deps: Pick<DomainDeps, 'secrets'>,
  nodeIds: readonly string[],
  inbounds: readonly ModelInbound[],
): Promise<ModelChain[]> {
  const asHop = await trx
    .selectFrom('chain_hops')
    .select('chain_id')
    .where(sql<boolean>`node_id = any(${[...nodeIds]}::text[])`)
    .execute();
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

export async function readCertificates(
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
export function certificatesOf(
  inbounds: readonly ModelInbound[],
  byId: ReadonlyMap<string, NodeModel['certificates'][number]>,
): NodeModel['certificates'] {
  return [...new Set(inbounds.flatMap(certificateIdOf))].sort().flatMap((id) => {
    const c = byId.get(id);
    return c ? [c] : [];
  });
}

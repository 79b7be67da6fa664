import { groupModels } from './group-models.ts';
import type { MemberCache } from './member-cache.ts';
import type { ModelInbound, ModelSubscription } from './model.ts';
import type { GroupMembers, SubscriptionRow } from './read-members.ts';

/**
 * The subscriptions granted any of the node's inbounds, each with the ids of those inbounds
 * (in no particular order: the compiler orders users itself).
 */
export function subscriptionsOfNode(
  inbounds: readonly ModelInbound[],
  groupsOfInbound: ReadonlyMap<string, ReadonlyArray<{ access_group_id: string }>>,
  inboundsOfGroup: ReadonlyMap<string, ReadonlyArray<{ inbound_id: string }>>,
  subscriptionsOfGroup: ReadonlyMap<string, GroupMembers>,
  cache: MemberCache<SubscriptionRow> | undefined,
): ModelSubscription[] {
  const mine = new Set(inbounds.map((i) => i.id));
  // The node's groups from its own inbounds (not a pass over the snapshot's every grant per node:
  // 250 x 250 in each snapshot of a fan-out), in id order.
  const groups = [...new Set(inbounds.flatMap((i) => (groupsOfInbound.get(i.id) ?? []).map((g) => g.access_group_id)))].sort();
  const toModel = (r: SubscriptionRow, inbound_ids: string[]): ModelSubscription => ({
    id: r.id,
    status: 'active',
    traffic_limit_bytes: r.traffic_limit_bytes === null ? null : Number(r.traffic_limit_bytes),
    expires_at: r.expires_ms === null ? null : new Date(Number(r.expires_ms)),
    device_limit: r.device_limit,
    upload_bps: r.upload_bps === null ? null : Number(r.upload_bps),
    download_bps: r.download_bps === null ? null : Number(r.download_bps),
    client_status: 'active',
    vless_uuid: r.vless_uuid,
    vmess_uuid: r.vmess_uuid,
    trojan_password: r.trojan_password,
    shadowsocks_password: r.shadowsocks_password,
    inbound_ids,
    source: r,
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
  // Several groups: each member once, with the inbounds of every group it is in. Its model is
  // kept with its row (the row of the first group it is found in) and that inbound list, so a
  // member whose row the member cache kept is not made again at every snapshot, as in the
  // one-group case (group-models.ts).
  const byId = new Map<string, { row: SubscriptionRow; inbound_ids: string[] }>();
  for (const group of groups) {
    const granted = grantedBy(group);
    for (const chunk of subscriptionsOfGroup.get(group)?.chunks ?? [])
      for (const r of chunk) {
        const seen = byId.get(r.id);
        if (seen) {
          for (const id of granted) if (!seen.inbound_ids.includes(id)) seen.inbound_ids.push(id);
        } else byId.set(r.id, { row: r, inbound_ids: granted.slice() });
      }
  }
  const out: ModelSubscription[] = [];
  for (const { row, inbound_ids } of byId.values()) {
    const key = inbound_ids.join('\n');
    const kept = mergedModels.get(row);
    if (kept?.key === key) out.push(kept.model);
    else {
      const model = toModel(row, inbound_ids);
      mergedModels.set(row, { key, model });
      out.push(model);
    }
  }
  return out;
}

/** A member's model in a node of several groups, with the inbound list it was made with, by the row it was made from. */
const mergedModels = new WeakMap<SubscriptionRow, { key: string; model: ModelSubscription }>();

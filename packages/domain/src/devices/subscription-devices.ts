import { NotFoundError } from '../errors.ts';
import { portalClient } from '../portal/portal-client.ts';
import type { DomainContext, DomainDeps } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';

/** A device registered by its HWID headers (GET /sub/{token}). */
export interface RegisteredDeviceView {
  id: string;
  hwid: string;
  os: string | null;
  os_version: string | null;
  model: string | null;
  user_agent: string | null;
  first_seen_at: string;
  last_seen_at: string;
}

/** A client address on the subscription's live connections at a node (its last DeviceReport). */
export interface OnlineAddressView {
  address: string;
  node_id: string;
  node_name: string;
  first_seen_at: string;
  seen_at: string;
  /** Refused by the fleet-wide device count (since then). */
  denied_at: string | null;
}

export interface SubscriptionDevicesView {
  subscription_id: string;
  device_limit: number | null;
  registered: RegisteredDeviceView[];
  online: OnlineAddressView[];
  /** The addresses the fleet-wide count refuses now (each once). */
  denied: string[];
}

/**
 * A subscription's devices: those its apps registered (HWID), the addresses on its live
 * connections per online node (a refused one held after its connections ended included), and
 * what the count refuses. `clientId`: only if the subscription is this client's (the portal),
 * else 404 as for one that does not exist.
 */
export async function subscriptionDevices(
  deps: Pick<DomainDeps, 'db'>,
  subscriptionId: string,
  clientId?: string,
): Promise<SubscriptionDevicesView> {
  let q = deps.db.selectFrom('subscriptions').select(['id', 'device_limit']).where('id', '=', subscriptionId);
  if (clientId !== undefined) q = q.where('client_id', '=', clientId);
  const sub = await q.executeTakeFirst();
  if (!sub) throw new NotFoundError('subscription', subscriptionId);
  const devices = await deps.db
    .selectFrom('subscription_devices')
    .selectAll()
    .where('subscription_id', '=', subscriptionId)
    .orderBy('first_seen_at')
    .orderBy('id')
    .execute();
  const online = await deps.db
    .selectFrom('subscription_online_addresses as o')
    .innerJoin('nodes as n', 'n.id', 'o.node_id')
    .select(['o.address', 'o.node_id', 'n.name as node_name', 'o.first_seen_at', 'o.seen_at', 'o.denied_at', 'o.listed'])
    .where('o.subscription_id', '=', subscriptionId)
    .where('n.connectivity', '=', 'online')
    .orderBy('o.first_seen_at')
    .orderBy('o.address')
    .orderBy('o.node_id')
    .execute();
  const iso = (d: Date) => new Date(d).toISOString();
  return {
    subscription_id: sub.id,
    device_limit: sub.device_limit,
    registered: devices.map((d) => ({
      id: d.id,
      hwid: d.hwid,
      os: d.os,
      os_version: d.os_version,
      model: d.model,
      user_agent: d.user_agent,
      first_seen_at: iso(d.first_seen_at),
      last_seen_at: iso(d.last_seen_at),
    })),
    online: online.map((o) => ({
      address: o.address,
      node_id: o.node_id,
      node_name: o.node_name,
      first_seen_at: iso(o.first_seen_at),
      seen_at: iso(o.seen_at),
      denied_at: o.denied_at === null ? null : iso(o.denied_at),
    })),
    denied: [...new Set(online.filter((o) => o.denied_at !== null).map((o) => o.address))].sort(),
  };
}

/**
 * Forgets a registered device (its app's next fetch registers it again if there is room).
 * Audited (subscription.device_removed) with who removed it: an admin, or the customer in the
 * portal (`clientId`: only their own subscription's device; anything else is 404).
 */
export async function removeSubscriptionDevice(
  ctx: DomainContext,
  subscriptionId: string,
  deviceId: string,
  clientId?: string,
): Promise<void> {
  await unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    let q = trx
      .selectFrom('subscription_devices as d')
      .innerJoin('subscriptions as s', 's.id', 'd.subscription_id')
      .select(['d.id', 'd.hwid', 'd.subscription_id'])
      .where('d.id', '=', deviceId)
      .where('d.subscription_id', '=', subscriptionId);
    if (clientId !== undefined) q = q.where('s.client_id', '=', clientId);
    const device = await q.executeTakeFirst();
    if (!device) throw new NotFoundError('device', deviceId);
    await trx.deleteFrom('subscription_devices').where('id', '=', deviceId).execute();
    uow.audit({
      action: 'subscription.device_removed',
      entity_type: 'subscription',
      entity_id: subscriptionId,
      details: { device_id: deviceId, hwid: device.hwid },
    });
  });
}

/** GET /portal/v1/devices: every subscription of the signed-in client with its devices (oldest subscription first). */
export async function portalDevices(ctx: DomainContext & { actor: { id: string } }): Promise<SubscriptionDevicesView[]> {
  const clientId = (await portalClient(ctx, ctx.actor.id)).id;
  const subs = await ctx.db.selectFrom('subscriptions').select('id').where('client_id', '=', clientId).orderBy('id').execute();
  const out: SubscriptionDevicesView[] = [];
  for (const s of subs) out.push(await subscriptionDevices(ctx, s.id, clientId));
  return out;
}

/** DELETE /portal/v1/devices/{deviceId}: a registered device of one of the client's subscriptions; another client's is 404. */
export async function portalRemoveDevice(ctx: DomainContext & { actor: { id: string } }, deviceId: string): Promise<void> {
  const clientId = (await portalClient(ctx, ctx.actor.id)).id;
  const row = await ctx.db
    .selectFrom('subscription_devices as d')
    .innerJoin('subscriptions as s', 's.id', 'd.subscription_id')
    .select('d.subscription_id')
    .where('d.id', '=', deviceId)
    .where('s.client_id', '=', clientId)
    .executeTakeFirst();
  if (!row) throw new NotFoundError('device', deviceId);
  await removeSubscriptionDevice(ctx, row.subscription_id, deviceId, clientId);
}

import { sql } from 'kysely';
import { newId } from '../shared/ids.ts';
import { type UnitOfWorkDeps, unitOfWork } from '../shared/unit-of-work.ts';
import type { DeviceHeaders } from './device-headers.ts';

/** What a fetch carrying x-hwid did: a new device, one seen before, or one over the subscription's device limit. */
export type DeviceFetch =
  | { outcome: 'registered' | 'refreshed'; device_id: string }
  | { outcome: 'over_limit'; device_limit: number; registered: number };

/**
 * Registers or refreshes the device a link fetch names (GET /sub/{token} with x-hwid). A known
 * HWID is refreshed (last seen, and what it says of itself now). A new one is registered unless
 * the subscription has a device limit and as many devices registered already: then nothing is
 * written and the fetch gets the over-limit answer (docs/subscription-link.md). Concurrent
 * fetches of one subscription register one at a time (the subscription's row is locked), so
 * two new devices racing for the last place never both get it.
 */
export async function registerDeviceFetch(deps: UnitOfWorkDeps, subscriptionId: string, device: DeviceHeaders): Promise<DeviceFetch> {
  const now = deps.clock.now();
  const refresh = {
    last_seen_at: now,
    os: sql<string | null>`coalesce(${device.os}, os)`,
    os_version: sql<string | null>`coalesce(${device.os_version}, os_version)`,
    model: sql<string | null>`coalesce(${device.model}, model)`,
    user_agent: sql<string | null>`coalesce(${device.user_agent}, user_agent)`,
  };
  // The common case, a device fetching again: one statement, no lock.
  const known = await deps.db
    .updateTable('subscription_devices')
    .set(refresh)
    .where('subscription_id', '=', subscriptionId)
    .where('hwid', '=', device.hwid)
    .returning('id')
    .executeTakeFirst();
  if (known) return { outcome: 'refreshed', device_id: known.id };
  return unitOfWork(deps, async ({ db: trx }) => {
    const sub = await trx
      .selectFrom('subscriptions')
      .select('device_limit')
      .where('id', '=', subscriptionId)
      .forNoKeyUpdate()
      .executeTakeFirst();
    // Deleted meanwhile: the answer is the document already read; nothing to register against.
    if (!sub) return { outcome: 'over_limit', device_limit: 0, registered: 0 } as const;
    const again = await trx
      .updateTable('subscription_devices')
      .set(refresh)
      .where('subscription_id', '=', subscriptionId)
      .where('hwid', '=', device.hwid)
      .returning('id')
      .executeTakeFirst();
    if (again) return { outcome: 'refreshed', device_id: again.id } as const;
    if (sub.device_limit !== null) {
      const { n } = await trx
        .selectFrom('subscription_devices')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('subscription_id', '=', subscriptionId)
        .executeTakeFirstOrThrow();
      if (Number(n) >= sub.device_limit) return { outcome: 'over_limit', device_limit: sub.device_limit, registered: Number(n) } as const;
    }
    const id = newId('dev');
    await trx
      .insertInto('subscription_devices')
      .values({ id, subscription_id: subscriptionId, ...device, first_seen_at: now, last_seen_at: now })
      .execute();
    return { outcome: 'registered', device_id: id } as const;
  });
}

import type { AdminRole, Db } from '@svc/db';
import { type MessageBus, TOPICS } from '../shared/bus.ts';
import { createBusInvalidatedCache } from '../shared/bus-invalidated-cache.ts';
import type { Clock } from '../shared/clock.ts';
import type { UnitOfWork } from '../shared/unit-of-work.ts';

/** What each request of an admin is authorized against: the admin as they are now. */
export interface AdminAccess {
  role: AdminRole;
  /** admins.token_generation: access tokens of another generation are refused. */
  generation: number;
}

export interface AdminAccessCache {
  /** The admin's current role and token generation, or null when the admin no longer exists. */
  get(adminId: string): Promise<AdminAccess | null>;
  /** Drops what this process holds of one admin (or of all). */
  forget(adminId?: string): void;
  /** Ends the bus subscription; later reads go to the database every time. */
  stop(): Promise<void>;
}

/** Read again at least this often: the bus delivers at most once, and `svc admin` may run without it. */
export const ADMIN_ACCESS_MAX_AGE_MS = 10_000;
/** Admins held per process; past this the cache starts over (only ids of verified tokens get here). */
const MAX_ENTRIES = 10_000;

/**
 * Spec 5.3 keeps access tokens unrevocable JWTs; issue 12.7 authorizes each request against
 * the admin as they are now. Reading the admins row per request would cost /auth/me's
 * throughput, so each process keeps (role, generation, exists) per admin: dropped at once
 * on `admins.changed` (published after commit by every change of an admin's role, password
 * or existence, through any process: Redis pub/sub in split mode) and at the latest after
 * ADMIN_ACCESS_MAX_AGE_MS. Ages come from the injected clock.
 */
export async function createAdminAccessCache(deps: { db: Db; bus: MessageBus; clock: Clock }): Promise<AdminAccessCache> {
  const cache = createBusInvalidatedCache<AdminAccess | null>(deps, {
    topics: [TOPICS.adminsChanged],
    maxAgeMs: ADMIN_ACCESS_MAX_AGE_MS,
    maxEntries: MAX_ENTRIES,
    keyOf: (message) => {
      const id = (message as { id?: unknown } | null)?.id;
      return typeof id === 'string' ? id : undefined;
    },
  });
  const load = async (adminId: string): Promise<AdminAccess | null> => {
    const row = await deps.db.selectFrom('admins').select(['role', 'token_generation']).where('id', '=', adminId).executeTakeFirst();
    return row ? { role: row.role, generation: row.token_generation } : null;
  };
  return { get: (adminId) => cache.get(adminId, () => load(adminId)), forget: cache.forget, stop: cache.stop };
}

/**
 * Called by every use case that changes an admin's role, password or existence, inside its
 * unit of work: after commit this process forgets the admin at once and every other process
 * hears `admins.changed`.
 */
export function adminAccessChanged(uow: UnitOfWork, deps: { adminAccess: AdminAccessCache }, adminId: string): void {
  uow.publish(TOPICS.adminsChanged, { id: adminId });
  uow.afterCommit(() => deps.adminAccess.forget(adminId));
}

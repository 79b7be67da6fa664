import { createBusInvalidatedCache, type DomainDeps, type GrantedInbound, readGrantedInbounds, TOPICS } from '@svc/domain';

/** Read again at least this often (a lost bus message). */
const MAX_AGE_MS = 60_000;
/** Distinct access-group sets kept; past this the cache starts over. */
const MAX_ENTRIES = 10_000;

export type Granted = (groupIds: readonly string[]) => Promise<readonly GrantedInbound[]>;

export interface GrantedInboundsCache {
  read: Granted;
  stop(): Promise<void>;
}

/**
 * What access groups grant, cached per process by the set of group ids: the one part of a
 * GET /sub/{token} answer that is the same for every subscription of those groups, and the
 * costly one to read (a five-table join). Every change to what a group grants (its inbound
 * list, an inbound, its profile, its node's admission) bumps node revisions and publishes
 * `nodes.changed`, which empties this cache in every portal process (so does
 * `subscriptions.changed`: a renamed node or profile); the rest of the answer
 * (the token, status, credentials, usage) is read per request, so a rotated token is never
 * served from here.
 */
export function grantedInboundsCache(deps: Pick<DomainDeps, 'db' | 'bus' | 'clock'>): GrantedInboundsCache {
  const cache = createBusInvalidatedCache<readonly GrantedInbound[]>(deps, {
    // nodes.changed: what a group grants; subscriptions.changed: what a link shows without a
    // revision bump (a node's name or address, a profile's name).
    topics: [TOPICS.nodesChanged, TOPICS.subscriptionsChanged],
    maxAgeMs: MAX_AGE_MS,
    maxEntries: MAX_ENTRIES,
  });
  return {
    read: (groupIds) => cache.get(groupIds.join(','), () => readGrantedInbounds(deps.db, groupIds)),
    stop: cache.stop,
  };
}

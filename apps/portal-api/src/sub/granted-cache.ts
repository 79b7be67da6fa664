import { type DomainDeps, type GrantedInbound, readGrantedInbounds, TOPICS } from '@svc/domain';

/** Read again at least this often (a node's name or address edited without a revision bump). */
const MAX_AGE_MS = 60_000;
/** Distinct access-group sets kept; past this the cache starts over. */
const MAX_ENTRIES = 10_000;

type Granted = (groupIds: readonly string[]) => Promise<readonly GrantedInbound[]>;
const caches = new WeakMap<object, Granted>();

/**
 * What access groups grant, cached per process by the set of group ids: the one part of a
 * GET /sub/{token} answer that is the same for every subscription of those groups, and the
 * costly one to read (a five-table join). Every change to what a group grants (its inbound
 * list, an inbound, its profile, its node's admission) bumps node revisions and publishes
 * `nodes.changed`, which empties this cache in every portal process; the rest of the answer
 * (the token, status, credentials, usage) is read per request, so a rotated token is never
 * served from here.
 */
export function grantedInbounds(deps: Pick<DomainDeps, 'db' | 'bus'>): Granted {
  let cached = caches.get(deps);
  if (!cached) {
    const entries = new Map<string, { at: number; value: Promise<readonly GrantedInbound[]> }>();
    const clear = () => entries.clear();
    // Until the subscription is live a change could be missed: drop what was read meanwhile.
    void deps.bus
      .subscribe(TOPICS.nodesChanged, clear)
      .then(clear)
      .catch(() => {});
    cached = (groupIds) => {
      const key = groupIds.join(',');
      const now = Date.now();
      let entry = entries.get(key);
      if (!entry || now - entry.at > MAX_AGE_MS) {
        if (entries.size >= MAX_ENTRIES) entries.clear();
        const value = readGrantedInbounds(deps.db, groupIds);
        entry = { at: now, value };
        entries.set(key, entry);
        value.catch(() => entries.delete(key));
      }
      return entry.value;
    };
    caches.set(deps, cached);
  }
  return cached;
}

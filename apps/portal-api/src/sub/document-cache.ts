import { type DomainDeps, type GrantedInbound, readSubscriptionDocuments, type SubscriptionDocumentData, TOPICS } from '@svc/domain';
import { createTurnBatcher } from '@svc/runtime';
import { grantedInbounds } from './granted-cache.ts';

/** Tokens kept; past this the cache starts over. */
const MAX_ENTRIES = 100_000;

type Read = (token: string) => Promise<SubscriptionDocumentData | null>;
const caches = new WeakMap<object, Read>();

/**
 * GET /sub/{token} answers from memory for up to `http.sub_cache_seconds` (0: every request
 * reads the database). Any change to a subscription's token, status, credentials or client
 * (`subscriptions.changed`) or to what its groups grant (`nodes.changed`) empties the cache in
 * every portal process as soon as it is committed, so a rotated token stops working at once;
 * the age limit only bounds how stale the usage figures in the headers get. Unknown tokens are
 * never cached (random guesses cannot fill the memory).
 */
export function subscriptionDocuments(deps: Pick<DomainDeps, 'db' | 'bus' | 'clock' | 'config'>): Read {
  let read = caches.get(deps);
  if (read) return read;
  const maxAgeMs = deps.config.http.sub_cache_seconds * 1000;
  const fetchOne = batchedReads(deps, grantedInbounds(deps));
  if (maxAgeMs === 0) {
    read = fetchOne;
  } else {
    const entries = new Map<string, { at: number; value: Promise<SubscriptionDocumentData | null> }>();
    const clear = () => entries.clear();
    for (const topic of [TOPICS.subscriptionsChanged, TOPICS.nodesChanged])
      void deps.bus
        .subscribe(topic, clear)
        .then(clear)
        .catch(() => {});
    read = (token) => {
      const now = Date.now();
      const hit = entries.get(token);
      if (hit && now - hit.at <= maxAgeMs) return hit.value;
      if (entries.size >= MAX_ENTRIES) entries.clear();
      const value = fetchOne(token);
      const entry = { at: now, value };
      entries.set(token, entry);
      value.then(
        (doc) => {
          if (doc === null && entries.get(token) === entry) entries.delete(token);
        },
        () => {
          if (entries.get(token) === entry) entries.delete(token);
        },
      );
      return value;
    };
  }
  caches.set(deps, read);
  return read;
}

/** Most tokens one statement looks up. */
const BATCH = 200;

/**
 * The database reads of one event-loop turn's requests go out as one statement
 * (readSubscriptionDocuments): under load, many apps' refreshes share a round trip and a
 * statement instead of one each. Every request still reads the database.
 */
function batchedReads(
  deps: Pick<DomainDeps, 'db' | 'clock'>,
  granted: (groupIds: readonly string[]) => Promise<readonly GrantedInbound[]>,
): Read {
  return createTurnBatcher<string, SubscriptionDocumentData | null>({
    maxBatch: BATCH,
    run: async (tokens) => {
      const docs = await readSubscriptionDocuments(deps, tokens, granted);
      return (token) => docs.get(token) ?? null;
    },
  });
}

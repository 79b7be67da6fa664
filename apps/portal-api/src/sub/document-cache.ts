import { createBusInvalidatedCache, type DomainDeps, readSubscriptionDocuments, type SubscriptionDocumentData, TOPICS } from '@svc/domain';
import { createTurnBatcher } from '@svc/runtime';
import type { Granted } from './granted-cache.ts';

/** Tokens kept; past this the cache starts over. */
const MAX_ENTRIES = 100_000;
/** Most tokens one statement looks up. */
const BATCH = 200;

type Read = (token: string) => Promise<SubscriptionDocumentData | null>;

export interface SubscriptionDocumentsCache {
  read: Read;
  /**
   * The cached answer for `token` when the cache holds one already read (as `read` would
   * return it now); undefined when `read` would have to wait (then the caller goes on with
   * `read`; peek itself starts no read). Always undefined without the cache.
   */
  peek(token: string): SubscriptionDocumentData | null | undefined;
  stop(): Promise<void>;
}

/**
 * GET /sub/{token} answers from memory for up to `http.sub_cache_seconds` (0: every request
 * reads the database). Any change to a subscription's token, status, credentials or client
 * (`subscriptions.changed`) or to what its groups grant (`nodes.changed`) empties the cache in
 * every portal process as soon as it is committed, so a rotated token stops working at once;
 * the age limit only bounds how stale the usage figures in the headers get. Unknown tokens are
 * never cached (random guesses cannot fill the memory).
 */
export function subscriptionDocumentsCache(
  deps: Pick<DomainDeps, 'db' | 'bus' | 'clock' | 'config'>,
  granted: Granted,
): SubscriptionDocumentsCache {
  const maxAgeMs = deps.config.http.sub_cache_seconds * 1000;
  const fetchOne = batchedReads(deps, granted);
  if (maxAgeMs === 0) return { read: fetchOne, peek: () => undefined, stop: async () => {} };
  const cache = createBusInvalidatedCache<SubscriptionDocumentData | null>(deps, {
    topics: [TOPICS.subscriptionsChanged, TOPICS.nodesChanged],
    maxAgeMs,
    maxEntries: MAX_ENTRIES,
    keep: (doc) => doc !== null,
  });
  const read: Read = (token) => cache.get(token, () => fetchOne(token));
  return { read, peek: (token) => cache.peek(token), stop: cache.stop };
}

/**
 * The database reads of one event-loop turn's requests go out as one statement
 * (readSubscriptionDocuments): under load, many apps' refreshes share a round trip and a
 * statement instead of one each; with every connection busy, the requests of the following
 * turns wait and go out together. Every request still reads the database.
 */
function batchedReads(deps: Pick<DomainDeps, 'db' | 'clock' | 'config'>, granted: Granted): Read {
  return createTurnBatcher<string, SubscriptionDocumentData | null>({
    maxBatch: BATCH,
    // As many statements at once as connections; the embedded database has one, and a second
    // statement waiting behind the running one keeps its thread busy while this one's answer is read.
    maxInFlight: deps.config.database.url ? deps.config.database.pool_size : 2,
    run: async (tokens) => {
      const docs = await readSubscriptionDocuments(deps, tokens, granted);
      return (token) => docs.get(token) ?? null;
    },
  });
}

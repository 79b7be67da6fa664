import { type DomainDeps, readSubscriptionDocument, type SubscriptionDocumentData, TOPICS } from '@svc/domain';
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
  const granted = grantedInbounds(deps);
  if (maxAgeMs === 0) {
    read = (token) => readSubscriptionDocument(deps, token, granted);
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
      const value = readSubscriptionDocument(deps, token, granted);
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

import { type DomainDeps, getSubLinkSettings, type SubLinkSettings, TOPICS } from '@svc/domain';

/** Read again at least this often even without a message (the bus delivers at most once). */
const MAX_AGE_MS = 60_000;

const caches = new WeakMap<object, () => Promise<SubLinkSettings>>();

/**
 * The subscription link settings, cached per process: every GET /sub/{token} needs them and
 * they change rarely. A change made through any replica's admin API publishes
 * `settings.changed`, which drops the cache here; a minute's age drops it too.
 */
export function subLinkSettings(deps: Pick<DomainDeps, 'db' | 'bus'>): Promise<SubLinkSettings> {
  let read = caches.get(deps);
  if (!read) {
    let cached: { at: number; value: Promise<SubLinkSettings> } | null = null;
    const drop = () => {
      cached = null;
    };
    // Until the subscription is live a change could be missed: drop what was read meanwhile.
    void deps.bus
      .subscribe(TOPICS.settingsChanged, drop)
      .then(drop)
      .catch(() => {});
    read = () => {
      const now = Date.now();
      if (!cached || now - cached.at > MAX_AGE_MS) {
        const value = getSubLinkSettings(deps);
        cached = { at: now, value };
        value.catch(drop);
      }
      return cached.value;
    };
    caches.set(deps, read);
  }
  return read();
}

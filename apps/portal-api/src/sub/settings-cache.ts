import { createBusInvalidatedCache, type DomainDeps, getSubLinkSettings, type SubLinkSettings, TOPICS } from '@svc/domain';
import { settledValues } from './settled.ts';

/** Read again at least this often even without a message (the bus delivers at most once). */
const MAX_AGE_MS = 60_000;

export interface SubLinkSettingsCache {
  read(): Promise<SubLinkSettings>;
  /** The settings `read` would return now, when already read; else undefined. */
  peek(): SubLinkSettings | undefined;
  stop(): Promise<void>;
}

/**
 * The subscription link settings, cached per process: every GET /sub/{token} needs them and
 * they change rarely. A change made through any replica's admin API publishes
 * `settings.changed`, which drops the cache here; a minute's age drops it too.
 */
export function subLinkSettingsCache(deps: Pick<DomainDeps, 'db' | 'bus' | 'clock'>): SubLinkSettingsCache {
  const cache = createBusInvalidatedCache<SubLinkSettings>(deps, {
    topics: [TOPICS.settingsChanged],
    maxAgeMs: MAX_AGE_MS,
    maxEntries: 1,
  });
  const settled = settledValues<SubLinkSettings>();
  const read = () => cache.get('settings', () => settled.track(getSubLinkSettings(deps)));
  return { read, peek: () => settled.valueOf(read()), stop: cache.stop };
}

import {
  type CustomerPages,
  createBusInvalidatedCache,
  type DomainDeps,
  getCustomerPages,
  getSubLinkSettings,
  type SubLinkSettings,
  TOPICS,
} from '@svc/domain';

/** Read again at least this often even without a message (the bus delivers at most once). */
const MAX_AGE_MS = 60_000;

export interface SettingCache<T> {
  read(): Promise<T>;
  /** What `read` would return now, when already read; else undefined. */
  peek(): T | undefined;
  stop(): Promise<void>;
}

/**
 * An installation setting, cached per process: GET /sub/{token} needs it on every request and it
 * changes rarely. A change made through any replica's admin API publishes `settings.changed`,
 * which drops the cache here; a minute's age drops it too.
 */
function settingCache<T>(deps: Pick<DomainDeps, 'db' | 'bus' | 'clock'>, load: () => Promise<T>): SettingCache<T> {
  const cache = createBusInvalidatedCache<T>(deps, { topics: [TOPICS.settingsChanged], maxAgeMs: MAX_AGE_MS, maxEntries: 1 });
  const read = () => cache.get('setting', load);
  return { read, peek: () => cache.peek('setting'), stop: cache.stop };
}

export type SubLinkSettingsCache = SettingCache<SubLinkSettings>;

/** The subscription link settings (formats, headers, the served page's words). */
export const subLinkSettingsCache = (deps: Pick<DomainDeps, 'db' | 'bus' | 'clock'>): SubLinkSettingsCache =>
  settingCache(deps, () => getSubLinkSettings(deps));

/** The customer pages' brand: the /sub page's import buttons follow its apps per platform. */
export const customerPagesCache = (deps: Pick<DomainDeps, 'db' | 'bus' | 'clock'>): SettingCache<CustomerPages> =>
  settingCache(deps, () => getCustomerPages(deps));

import type { CustomerPages, DomainDeps, SubLinkSettings, SubscriptionDocumentData } from '@svc/domain';
import { subscriptionDocumentsCache } from './document-cache.ts';
import { grantedInboundsCache } from './granted-cache.ts';
import { createLegacyLinks, type LegacyLinks } from './legacy-links.ts';
import { customerPagesCache, subLinkSettingsCache } from './settings-cache.ts';

/** What GET /sub/{token} reads through, and the one stop that ends their bus subscriptions. */
export interface SubLinkCaches {
  documents(token: string): Promise<SubscriptionDocumentData | null>;
  settings(): Promise<SubLinkSettings>;
  /** The brand's apps per platform, for the page a browser gets. */
  customerPages(): Promise<CustomerPages>;
  /** What documents() and settings() would give now, when they need not wait (else undefined). */
  documentNow(token: string): SubscriptionDocumentData | null | undefined;
  settingsNow(): SubLinkSettings | undefined;
  /** Old links of imported panels (legacy-links.ts). */
  legacy: LegacyLinks;
  stop(): Promise<void>;
}

export function createSubLinkCaches(deps: Pick<DomainDeps, 'db' | 'bus' | 'clock' | 'config' | 'secrets' | 'log'>): SubLinkCaches {
  const granted = grantedInboundsCache(deps);
  const documents = subscriptionDocumentsCache(deps, granted.read);
  const settings = subLinkSettingsCache(deps);
  const pages = customerPagesCache(deps);
  const legacy = createLegacyLinks(deps);
  return {
    documents: documents.read,
    settings: settings.read,
    customerPages: pages.read,
    documentNow: documents.peek,
    settingsNow: settings.peek,
    legacy,
    stop: async () => {
      await Promise.all([documents.stop(), granted.stop(), settings.stop(), pages.stop(), legacy.stop()]);
    },
  };
}

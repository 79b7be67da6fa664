import { type DomainDeps, type LegacyLinkMatch, recordLegacyHits, resolveLegacySubToken } from '@svc/domain';

/** Old links answered are added to their sources' counts this long after the first of them (at most one write a second), and at stop. */
const FLUSH_DELAY_MS = 1000;
/** How long "are there import sources at all" is believed (the fast path asks it for every unknown token). */
const SOURCES_TTL_MS = 30_000;

/**
 * Old links of imported panels (docs/import.md, "Old links"): the token of ours an old link
 * stands for, the hits per source counted in memory and written once a minute, and whether any
 * source exists (without one, an unknown token is a 404 at once).
 */
export interface LegacyLinks {
  /** The subscription an old link's token (or key) opens: our link token for it, and the source's name of the user; or null. */
  lookup(presented: string): Promise<LegacyLinkMatch | null>;
  /** Whether old links may exist (an import source is known); undefined until first read. */
  mayExistNow(): boolean | undefined;
  stop(): Promise<void>;
}

export function createLegacyLinks(deps: Pick<DomainDeps, 'db' | 'secrets' | 'clock' | 'log'>): LegacyLinks {
  const hits = new Map<string, number>();
  let known: { any: boolean; at: number } | undefined;
  let reading: Promise<boolean> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const flush = async () => {
    timer = undefined;
    if (hits.size === 0) return;
    const taken = new Map(hits);
    hits.clear();
    await recordLegacyHits(deps, taken).catch((err) => deps.log.warn({ err }, 'old link hits not recorded'));
  };
  const refresh = () => {
    reading ??= deps.db
      .selectFrom('import_sources')
      .select('id')
      .limit(1)
      .execute()
      .then((rows) => {
        known = { any: rows.length > 0, at: Date.now() };
        return known.any;
      })
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
  return {
    async lookup(presented) {
      const match = await resolveLegacySubToken(deps, presented);
      if (!match) return null;
      known = { any: true, at: Date.now() };
      hits.set(match.sourceId, (hits.get(match.sourceId) ?? 0) + 1);
      if (!timer) {
        timer = setTimeout(() => void flush(), FLUSH_DELAY_MS);
        timer.unref();
      }
      return match;
    },
    mayExistNow() {
      if (!known || Date.now() - known.at > SOURCES_TTL_MS) void refresh().catch(() => {});
      return known?.any;
    },
    async stop() {
      clearTimeout(timer);
      await flush();
    },
  };
}

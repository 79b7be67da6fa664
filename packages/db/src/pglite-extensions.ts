import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';

/**
 * The extensions every embedded database loads: the migrations create pg_trgm where it can be
 * (the list search's indexes, migration 2026-11-29T1600), and a data directory made with it
 * opens only where it is loaded again. Every PGlite.create goes through these options (the
 * worker thread names the same list: it cannot receive functions).
 */
export const PGLITE_EXTENSIONS = { pg_trgm };

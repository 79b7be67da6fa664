import { defineConfig } from 'vitest/config';

// One run over every package and app. Integration suites boot real servers on port 0 over
// PGlite (default) or the PostgreSQL/Redis named by DATABASE_URL/REDIS_URL (see .ci/run).

/**
 * Suites whose subject is not the configured store or bus: pure code, PGlite itself, the agent
 * with its engine (the control plane under it is proven on both stores by its own suites), the
 * bundles, every deployable on its own embedded database. They run on the embedded default;
 * with DATABASE_URL set (CI's PostgreSQL + Redis pass, or a developer's server) the same
 * command runs the suites that depend on the store, against it, and leaves these out: they
 * would prove the same thing a second time.
 */
const EMBEDDED_ONLY = [
  'packages/{client-apps,config,desired-state,domain,engine-api,format,metrics,outbound,proto,runtime,sub-formats,xray-config}/src/**/*.test.ts',
  'packages/{api-client,config,desired-state,outbound,sub-formats}/test/**/*.test.ts',
  'packages/providers/src/**/*.test.ts',
  'packages/importers/test/{read-marzban,read-3x-ui}.test.ts',
  'packages/testkit/src/{certificates,http-through-proxy,peers,prometheus-text,share-link-client,share-links}.test.ts',
  'packages/db/src/{pglite-dialect,pglite-worker,data-dir-lock,data-model-doc}.test.ts',
  'packages/db/src/backup/{backup-archive,retention}.test.ts',
  'apps/agent/test/**/*.test.ts',
  // The admin panel and the customer portal in a browser: what it shows comes through the API, whose suites run on both stores.
  'apps/admin-web/test/**/*.test.ts',
  'apps/portal-web/test/**/*.test.ts',
  'apps/cli/test/{bundle,deployables-metrics,docs-links}.test.ts',
  'apps/control-plane/test/bundle.test.ts',
];

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'apps/*/test/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...(process.env.DATABASE_URL ? EMBEDDED_ONLY : [])],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    // Test files share their worker's process (and its loaded modules, the migrated PGlite
    // template, compiled WebAssembly) instead of a fresh one each: on 2 cores the suite spent
    // ~580 s importing the same workspace modules once per file and ~3 s per file loading the
    // template. Suites isolate by database and port, never by order; a suite that changes
    // process-wide state (acme-client's one axios instance) puts it back in afterAll.
    isolate: false,
  },
});

import { defineConfig } from 'vitest/config';

// One run over every package and app. Integration suites boot real servers on port 0 over
// PGlite (default) or the PostgreSQL/Redis named by DATABASE_URL/REDIS_URL (see .ci/run).
export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'apps/*/test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});

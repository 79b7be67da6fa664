import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { type AppProcess, migratedDataDir, spawnApp } from '@svc/testkit';
import { scrapeMetrics } from '@svc/testkit/metrics-scrape';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Every deployable serves Prometheus metrics on its metrics port (docs/observability.md): the
// four split-mode apps and `svc start` run as the images run them (node dist/main.js, built by
// `pnpm test` and `pnpm typecheck` first; `svc start` through appEntry, so from source when its
// bundle is stale), each on its own embedded database (migrated already: migratedDataDir).

const TOKEN = 'deployables-scrape-token-0123456789';
const APPS = [
  { app: 'svc', entry: 'apps/cli/src/main.ts', args: ['start'] },
  { app: 'admin-api', entry: 'apps/admin-api/dist/main.js', args: [] },
  { app: 'portal-api', entry: 'apps/portal-api/dist/main.js', args: [] },
  { app: 'control-plane', entry: 'apps/control-plane/dist/main.js', args: [] },
  { app: 'worker', entry: 'apps/worker/dist/main.js', args: [] },
] as const;

const running: Array<{ app: string; proc: AppProcess; metricsUrl: string; dir: string }> = [];

beforeAll(async () => {
  // Started together: each waits for its own database and migrations.
  await Promise.all(
    APPS.map(async ({ app, entry, args }) => {
      const dir = await migratedDataDir(`svc-metrics-${app}-`);
      const proc = spawnApp(
        entry,
        {
          SVC_DATA_DIR: dir,
          SVC_HTTP_HOST: '127.0.0.1',
          SVC_HTTP_PORT: '0',
          SVC_GRPC_HOST: '127.0.0.1',
          SVC_GRPC_PORT: '0',
          SVC_METRICS_PORT: '0',
          SVC_METRICS_TOKEN: TOKEN,
          SVC_INSTALLATION_KEY: randomBytes(32).toString('base64'),
        },
        [...args],
      );
      const entryLine = { app, proc, metricsUrl: '', dir };
      running.push(entryLine);
      const line = await proc.waitForLog(/^metrics at /, 90_000);
      expect(line.svc).toBe(app);
      entryLine.metricsUrl = line.metrics_url;
    }),
  );
}, 120_000);

afterAll(async () => {
  for (const r of running) {
    await r.proc.stop().catch(() => {});
    rmSync(r.dir, { recursive: true, force: true });
  }
});

describe('each deployable serves /metrics on its metrics port, behind the scrape token', () => {
  it.each(APPS.map((a) => a.app))('%s', async (app) => {
    const r = running.find((x) => x.app === app) as (typeof running)[number];
    expect(r.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect((await fetch(r.metricsUrl)).status).toBe(401);
    const m = await scrapeMetrics(r.metricsUrl, TOKEN);
    expect(m.labelSets('process_resident_memory_bytes')).toEqual([{ app }]);
    expect(m.has('svc_http_request_duration_seconds', 'histogram')).toBe(true);
    expect(m.has('svc_gateway_streams_open', 'gauge')).toBe(true);
    expect(m.has('svc_jobs_total', 'counter')).toBe(true);
    if (app === 'worker' || app === 'svc') {
      // The worker reports the queues it keeps scheduled.
      await expect
        .poll(async () => (await scrapeMetrics(r.metricsUrl, TOKEN)).labelSets('svc_job_queue_depth').map((l) => l.job), {
          timeout: 30_000,
        })
        .toContain('subscriptions.sweep');
    }
  });
});

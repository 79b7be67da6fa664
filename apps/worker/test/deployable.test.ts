import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AppProcess, createTestDatabase, freePort, spawnApp, type TestDatabase, testDatabaseUrl } from '@svc/testkit';
import { afterAll, describe, expect, it } from 'vitest';

// The worker as its own deployable (split mode, docker-compose.yml's `worker`): it takes jobs and
// serves the payment webhook ingress on http.port, and stops cleanly on SIGTERM.
const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe('apps/worker as a process', () => {
  it('serves POST /webhooks/payments/{provider} and its health, and exits 0 on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-worker-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const env: Record<string, string> = {
      SVC_DATA_DIR: dataDir,
      SVC_HTTP_HOST: '127.0.0.1',
      SVC_HTTP_PORT: String(port),
      SVC_INSTALLATION_KEY: randomBytes(32).toString('base64'),
    };
    if (testDatabaseUrl()) {
      const db: TestDatabase = await createTestDatabase();
      cleanups.push(() => db.destroy());
      env.DATABASE_URL = db.url as string;
      if (process.env.REDIS_URL) env.REDIS_URL = process.env.REDIS_URL;
    }
    const worker: AppProcess = spawnApp('apps/worker/src/main.ts', env);
    cleanups.push(() => worker.kill());
    const running = await worker.waitForLog(/^worker running/, 60_000);
    expect(running.url).toBe(`http://127.0.0.1:${port}`);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    const hook = await fetch(`http://127.0.0.1:${port}/webhooks/payments/ppr_nothere`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(hook.status).toBe(404);
    expect(((await hook.json()) as { type: string }).type).toBe('urn:svc:problem:not-found');
    // Only the ingress: the APIs are other deployables.
    expect((await fetch(`http://127.0.0.1:${port}/api/v1/auth/methods`)).status).toBe(404);
    expect(await worker.stop()).toBe(0);
  }, 90_000);
});

// A product surface served from a bench's child process: its configuration, the same for every
// such child but for what the bench sets in the environment (DATABASE_URL, BENCH_SCHEMA, ...).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Config, loadConfig } from '@svc/config';

/** Login and refresh limits high enough never to cap a load test. */
const lifted = { limit: 1_000_000_000, window_seconds: 1 };
export const LIFTED_RATE_LIMITS = {
  rate_limits: { login: { per_ip: lifted, per_subject: lifted, per_account: lifted }, refresh: { per_ip: lifted, per_subject: lifted } },
};

/** Loopback on a free port, warn-level logs and a fresh data dir, under what `defaults` and the environment set. */
export function childConfig(defaults: Record<string, string> = {}, overrides: Record<string, unknown> = {}): Config {
  return loadConfig(
    {
      SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-bench-')),
      SVC_HTTP_HOST: '127.0.0.1',
      SVC_HTTP_PORT: '0',
      SVC_LOG_LEVEL: 'warn',
      ...defaults,
      ...process.env,
    },
    overrides,
  );
}

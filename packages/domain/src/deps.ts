import type { Config } from '@svc/config';
import type { Db } from '@svc/db';
import type { Metrics } from '@svc/metrics';
import type { Logger } from 'pino';
import { createAdminAccessCache } from './auth/admin-access.ts';
import { createApiTokenCache } from './auth/api-tokens.ts';
import { createPasswordHasher } from './auth/password-hasher.ts';
import type { RateLimitStore } from './auth/rate-limit.ts';
import { createTokenService } from './auth/tokens.ts';
import { bindInstallationKey } from './installation/installation-key.ts';
import type { MessageBus } from './shared/bus.ts';
import type { Clock } from './shared/clock.ts';
import type { DomainDeps, Vendors } from './shared/context.ts';
import type { JobQueue } from './shared/jobs.ts';
import type { OutboundPort } from './shared/outbound.ts';
import { createSealer } from './shared/sealed.ts';

/**
 * Wires the domain's services for one process: checks the installation key against the
 * database, loads (or creates) the signing key, sizes the password hasher.
 */
export async function createDomainDeps(opts: {
  config: Config;
  db: Db;
  clock: Clock;
  log: Logger;
  rateLimiter: RateLimitStore;
  bus: MessageBus;
  jobs: JobQueue;
  installationKey: Buffer;
  metrics: Metrics;
  outbound: OutboundPort;
  vendors: Vendors;
}): Promise<DomainDeps> {
  await bindInstallationKey(opts.db, opts.installationKey, opts.clock);
  const tokens = await createTokenService({
    ...opts,
    accessTtlSeconds: opts.config.auth.access_token_ttl_seconds,
  });
  return {
    db: opts.db,
    clock: opts.clock,
    log: opts.log,
    config: opts.config,
    passwords: createPasswordHasher(opts.config.password_hash),
    rateLimiter: opts.rateLimiter,
    bus: opts.bus,
    jobs: opts.jobs,
    tokens,
    adminAccess: await createAdminAccessCache(opts),
    apiTokens: await createApiTokenCache(opts),
    secrets: createSealer(opts.installationKey),
    metrics: opts.metrics,
    outbound: opts.outbound,
    vendors: opts.vendors,
  };
}

import type { DomainDeps } from '@svc/domain';

/** The testbed's deps with other rate limits (per bucket); the testbed's own config has no file to set them in. */
export function withRateLimits(deps: DomainDeps, limits: Partial<DomainDeps['config']['rate_limits']>): DomainDeps {
  return { ...deps, config: { ...deps.config, rate_limits: { ...deps.config.rate_limits, ...limits } } };
}

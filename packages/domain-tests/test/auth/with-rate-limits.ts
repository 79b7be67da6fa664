import type { DomainDeps } from '@svc/domain';

type RateLimits = DomainDeps['config']['rate_limits'];

/**
 * The testbed's deps with other rate limits (per bucket, merged over the bucket's defaults);
 * the testbed's own config has no file to set them in.
 */
export function withRateLimits(deps: DomainDeps, limits: { [B in keyof RateLimits]?: Partial<RateLimits[B]> }): DomainDeps {
  const merged = { ...deps.config.rate_limits };
  for (const [bucket, windows] of Object.entries(limits) as Array<[keyof RateLimits, object]>) {
    merged[bucket] = { ...merged[bucket], ...windows } as never;
  }
  return { ...deps, config: { ...deps.config, rate_limits: merged } };
}

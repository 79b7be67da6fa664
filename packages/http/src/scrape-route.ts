import type { OpenAPIHono } from '@hono/zod-openapi';
import type { DomainDeps } from '@svc/domain';
import { scrapeTokenMatches } from '@svc/metrics';
import type { AppEnv } from './env.ts';
import { problemResponse } from './problem.ts';

/**
 * GET /metrics on the public HTTP port, only when a scrape token is configured
 * (SVC_METRICS_TOKEN): a scrape without it, or with another, is a 401 problem and reads
 * nothing. Without a token the route does not exist here (404 like any unknown path); metrics
 * are then on the metrics port alone (SVC_METRICS_PORT).
 */
export function registerScrapeRoute(app: OpenAPIHono<AppEnv>, deps: DomainDeps): void {
  const token = deps.config.metrics.token;
  if (token === undefined) return;
  app.get('/metrics', async (c) => {
    if (!scrapeTokenMatches(c.req.header('authorization'), token)) {
      return problemResponse(
        c,
        'unauthenticated',
        'a scrape needs Authorization: Bearer <SVC_METRICS_TOKEN>',
        {},
        {
          headers: { 'www-authenticate': 'Bearer' },
        },
      );
    }
    return c.body(await deps.metrics.scrape(), 200, { 'content-type': deps.metrics.contentType, 'cache-control': 'no-store' });
  });
}

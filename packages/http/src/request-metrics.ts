import { methodLabel, statusClass, UNMATCHED_ROUTE } from '@svc/metrics';
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { AppEnv } from './env.ts';

/**
 * The route a request was matched to, as its pattern (`/sub/:token`, never the path: a token or
 * an id must not become a label). Middlewares (`use`, method ALL) do not count as routes; a
 * request that matched none, or none for its method (404, 405), is `unmatched`.
 */
export function routeLabel(c: Context): string {
  const routes = matchedRoutes(c);
  for (let i = routes.length - 1; i >= 0; i--) {
    const r = routes[i];
    if (r && r.method !== 'ALL') return r.path;
  }
  return UNMATCHED_ROUTE;
}

/**
 * The first root middleware: times every request Hono answers into
 * svc_http_request_duration_seconds, and writes one `request` line per request at debug level
 * (request_id, method, route, status, duration_ms). The fast path (fast-listener.ts) records
 * the same for the answers it gives.
 */
export function requestMetrics(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const deps = c.get('deps');
      if (deps) {
        const seconds = (performance.now() - started) / 1000;
        const route = routeLabel(c);
        const status = c.res.status;
        deps.metrics.httpDuration.observe({ route, method: methodLabel(c.req.method), status_class: statusClass(status) }, seconds);
        if (deps.log.isLevelEnabled('debug'))
          deps.log.debug(
            { request_id: c.get('requestId'), method: c.req.method, route, status, duration_ms: Math.round(seconds * 1e4) / 10 },
            'request',
          );
      }
    }
  };
}

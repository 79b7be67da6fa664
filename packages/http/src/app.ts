import type { Hook } from '@hono/zod-openapi';
import { OpenAPIHono } from '@hono/zod-openapi';
import { type DomainDeps, fieldErrors } from '@svc/domain';
import type { MiddlewareHandler } from 'hono';
import { requestId } from 'hono/request-id';
import { sql } from 'kysely';
import { limitBody, OWN_BODY_LIMIT } from './body-limit.ts';
import { clientIp } from './client-ip.ts';
import type { AppEnv } from './env.ts';
import { mapError } from './errors.ts';
import { recordRootMiddlewares } from './fast-listener.ts';
import { problemResponse } from './problem.ts';
import { requestMetrics } from './request-metrics.ts';
import { textRuleOnUrlAndHeaders } from './request-text.ts';
import { registerScrapeRoute } from './scrape-route.ts';

const TARGET_PREFIX: Record<string, string> = { query: 'query.', param: 'path.', header: 'header.', json: '', form: '' };

/** Failed zod validation of any part of the request: 400 problem+json with errors per field. */
export const validationHook: Hook<unknown, AppEnv, string, unknown> = (result, c) => {
  if (!result.success) {
    const target = (result as { target?: string }).target ?? 'json';
    return problemResponse(
      c,
      'validation',
      `the request ${target === 'json' ? 'body' : target} is invalid`,
      fieldErrors(result.error, TARGET_PREFIX[target] ?? ''),
    );
  }
};

/** A feature app (routes only); mount it on the root app made by createApp. */
export function createRouter(basePath = '/'): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
  return basePath === '/' ? app : (app.basePath(basePath) as OpenAPIHono<AppEnv>);
}

/**
 * The one root app factory: request id, client address, `nosniff`, body limit, the text rule
 * on paths, queries and data headers (request-text.ts; JSON bodies get it per route, after
 * auth), problem+json for every error (domain errors, malformed JSON, unknown route, wrong
 * method).
 */
export function createApp(deps: DomainDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  const { trust_proxy, body_limit_bytes } = deps.config.http;
  const middlewares: MiddlewareHandler<AppEnv>[] = [
    requestMetrics(),
    requestId(),
    async (c, next) => {
      c.set('deps', deps);
      c.set('clientIp', clientIp(c, trust_proxy));
      await next();
    },
    // Browsers must take every answer (JSON, problem, docs assets) as the type it declares.
    async (c, next) => {
      await next();
      c.res.headers.set('x-content-type-options', 'nosniff');
    },
    limitBody(body_limit_bytes, { exempt: OWN_BODY_LIMIT }),
    textRuleOnUrlAndHeaders,
  ];
  for (const m of middlewares) app.use(m);
  // A fast path (fast-listener.ts) does for a GET what these do: keep that list in step.
  recordRootMiddlewares(app, middlewares);
  // Every line about a request names it (request_id, as its X-Request-Id answer header).
  app.onError((err, c) => mapError(err, c, deps.log.child({ request_id: c.get('requestId') })));
  // Liveness and readiness for orchestrators; outside the versioned surfaces.
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    try {
      await sql`select 1`.execute(deps.db);
      return c.json({ status: 'ok' });
    } catch (err) {
      deps.log.warn({ err, request_id: c.get('requestId') }, 'readiness check failed');
      return problemResponse(c, 'unavailable', 'the database is not reachable');
    }
  });
  registerScrapeRoute(app, deps);
  app.notFound((c) => {
    const allowed = allowedMethods(app, c.req.path);
    if (allowed.length > 0 && !allowed.includes(c.req.method)) {
      return problemResponse(
        c,
        'method-not-allowed',
        `${c.req.method} is not allowed on ${c.req.path}`,
        {},
        { headers: { allow: allowed.join(', ') } },
      );
    }
    return problemResponse(c, 'route-not-found', `no route for ${c.req.method} ${c.req.path}`);
  });
  return app;
}

const patterns = new WeakMap<object, Array<{ method: string; re: RegExp }>>();

function allowedMethods(app: OpenAPIHono<AppEnv>, path: string): string[] {
  let list = patterns.get(app);
  if (!list || list.length !== app.routes.filter((r) => r.method !== 'ALL').length) {
    list = app.routes
      .filter((r) => r.method !== 'ALL')
      .map((r) => ({
        method: r.method,
        re: new RegExp(
          `^${r.path
            .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
            .replace(/:[A-Za-z0-9_]+/g, '[^/]+')
            .replace(/\*/g, '.*')}/?$`,
        ),
      }));
    patterns.set(app, list);
  }
  const methods = new Set(list.filter((p) => p.re.test(path)).map((p) => p.method));
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods];
}

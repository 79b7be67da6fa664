import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from './env.ts';

type Doc = ReturnType<OpenAPIHono<AppEnv>['getOpenAPI31Document']>;
type Operation = { operationId?: string; security?: Array<Record<string, string[]>> };

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const IRREGULAR: Record<string, string> = { identities: 'identity', deliveries: 'delivery', settings: 'settings', stats: 'stats' };

const pascal = (segment: string) =>
  segment
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => (w[0] as string).toUpperCase() + w.slice(1))
    .join('');
const singular = (word: string) => IRREGULAR[word] ?? (word.endsWith('s') ? word.slice(0, -1) : word);
const isParam = (s: string) => s.startsWith('{');

/**
 * An operationId for every operation that has none (issue 30.8), derived from method and path
 * so that it never drifts from the route, stable and unique per document:
 * - a collection (a path that also has `{path}/{param}`): list<Things>, create<Thing>;
 * - one record (`{collection}/{param}`): get<Thing>, update<Thing> (PATCH), delete<Thing>;
 * - anything else: <method> + the path's words, a record's actions named after their record
 *   (postNodeEnrollToken, getSubscriptionUsage, getAuthMethods, postSetup).
 * A route may still set its own operationId.
 */
export function withOperationIds(doc: Doc, prefix: string): Doc {
  const paths = Object.keys(doc.paths ?? {});
  const relative = (p: string) => (p.startsWith(prefix) ? p.slice(prefix.length) : p);
  const collections = new Set(
    paths
      .map((p) => relative(p).split('/').filter(Boolean))
      .filter((s) => s.length >= 2 && isParam(s.at(-1) as string) && !isParam(s.at(-2) as string))
      .map((s) => `/${s.slice(0, -1).join('/')}`),
  );
  const seen = new Map<string, string>();
  for (const path of paths) {
    const item = (doc.paths as Record<string, Record<string, Operation>>)[path] as Record<string, Operation>;
    const rel = relative(path);
    const segments = rel.split('/').filter(Boolean);
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      op.operationId ??= derive(method, rel, segments, collections);
      const taken = seen.get(op.operationId);
      if (taken) throw new Error(`operationId ${op.operationId} of ${method.toUpperCase()} ${path} is also ${taken}'s`);
      seen.set(op.operationId, `${method.toUpperCase()} ${path}`);
    }
  }
  return doc;
}

function derive(method: string, rel: string, segments: string[], collections: Set<string>): string {
  const words = segments.filter((s) => !isParam(s));
  if (collections.has(rel)) {
    const last = words.at(-1) as string;
    const parents = words.slice(0, -1).map(pascal).join('');
    if (method === 'get') return `list${parents}${pascal(last)}`;
    if (method === 'post') return `create${parents}${pascal(singular(last))}`;
  }
  const recordOf = segments.length >= 2 && isParam(segments.at(-1) as string) ? `/${segments.slice(0, -1).join('/')}` : null;
  if (recordOf && collections.has(recordOf)) {
    const name = words.slice(0, -1).map(pascal).join('') + pascal(singular(words.at(-1) as string));
    const verb = { get: 'get', patch: 'update', put: 'replace', delete: 'delete', post: 'post' }[method] as string;
    return `${verb}${name}`;
  }
  // Actions on a record (…/{id}/action) and singletons: the method and every word, a record's collection singular.
  const named = segments.map((s, i) =>
    isParam(s) ? '' : i + 1 < segments.length && isParam(segments[i + 1] as string) ? pascal(singular(s)) : pascal(s),
  );
  return `${method}${named.join('')}`;
}

/**
 * The document route (`GET {base}/openapi.json`): OpenAPI 3.1 from the routes' declarations,
 * with operationIds and the security schemes a client generator needs (issue 30.8).
 */
export function registerOpenApiDocument(app: OpenAPIHono<AppEnv>, opts: { base: string; info: Doc['info']; refreshCookie?: string }): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: `The access token of a token pair (spec 4.3): Authorization: Bearer <access_token>.`,
  });
  if (opts.refreshCookie)
    app.openAPIRegistry.registerComponent('securitySchemes', 'refreshCookie', {
      type: 'apiKey',
      in: 'cookie',
      name: opts.refreshCookie,
      description: `The refresh token as web apps on this origin hold it (\`?session=cookie\` on the sign-in and refresh routes): HttpOnly, SameSite=Strict, sent only to POST ${opts.base}/auth/refresh. Named \`__Secure-${opts.refreshCookie}\` over https.`,
    });
  let cached: Doc | null = null;
  app.get('/openapi.json', (c) => {
    cached ??= withOperationIds(app.getOpenAPI31Document({ openapi: '3.1.0', info: opts.info, servers: [{ url: '/' }] }), opts.base);
    return c.json(cached);
  });
}

import { createRoute, type RouteConfig, z } from '@hono/zod-openapi';
import type { DomainDeps } from '@svc/domain';
import type { Context, MiddlewareHandler } from 'hono';
import { type RouteAuth, requireAuth } from './auth.ts';
import { verifyCursor } from './pagination.ts';
import { problemResponse } from './problem.ts';
import { textRuleOnJsonBody } from './request-text.ts';

export const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    errors: z.record(z.string(), z.string()),
  })
  .openapi('Problem');

const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ProblemSchema } },
});

// Hono's JSON validator parses only these (case-sensitive) media types and treats any other
// body as {}: refuse the rest with 415 instead of silently ignoring them.
const JSON_TYPE = /^application\/([a-z-.]+\+)?json(;\s*[a-zA-Z0-9-]+=([^;]+))*$/;

const requireJsonBody: MiddlewareHandler = async (c, next) => {
  const length = Number(c.req.header('content-length') ?? 0);
  const hasBody = length > 0 || c.req.header('transfer-encoding') !== undefined;
  const type = c.req.header('content-type');
  if (hasBody && !(type && JSON_TYPE.test(type))) {
    return problemResponse(c, 'unsupported-media-type', 'send the body as application/json');
  }
  if (hasBody && type && !utf8Charset(type)) {
    return problemResponse(c, 'unsupported-media-type', 'send the body as UTF-8 JSON (charset=utf-8 or no charset)');
  }
  await next();
};

/** An upload (a file and its options as form fields): multipart/form-data only. */
const requireMultipartBody: MiddlewareHandler = async (c, next) => {
  const type = c.req.header('content-type') ?? '';
  if (!/^multipart\/form-data\s*;/i.test(type)) return problemResponse(c, 'unsupported-media-type', 'send the body as multipart/form-data');
  await next();
};

/** JSON is UTF-8 (RFC 8259): a `charset` parameter, if any, must say so. */
function utf8Charset(type: string): boolean {
  for (const param of type.split(';').slice(1)) {
    const eq = param.indexOf('=');
    if (param.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    let value = param
      .slice(eq + 1)
      .trim()
      .toLowerCase();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (value !== 'utf-8' && value !== 'utf8') return false;
  }
  return true;
}
/**
 * Nothing an API route answers may be kept by a cache: token pairs, enrollment tokens and
 * subscription links are credentials, and a refusal of one route must not be served for
 * another caller. Set after the handler (and after the error mapping), so every answer of a
 * declared route carries it, refusals included. `Pragma` for HTTP/1.0 caches.
 */
const noStore: MiddlewareHandler = async (c, next) => {
  await next();
  c.res.headers.set('cache-control', 'no-store');
  c.res.headers.set('pragma', 'no-cache');
};

/** Every error response a route declares is a problem document; say so in the OpenAPI. */
function withProblemBodies(responses: Record<string, { description: string; content?: unknown }>) {
  const out: Record<string, unknown> = {};
  for (const [code, res] of Object.entries(responses)) out[code] = Number(code) >= 400 && !res.content ? problem(res.description) : res;
  return out;
}

/**
 * Declares a route once: method, path, zod request/response schemas, who may call it.
 * Adds the auth middleware (before validation and handler), the bearer security
 * requirement and the roles to the OpenAPI operation, and the problem responses. Every
 * answer is `Cache-Control: no-store`.
 */
export function defineRoute<const R extends RouteConfig>(
  spec: R & {
    auth: RouteAuth | null;
    /** Throws (NotFound) when the route is switched off: runs before anything else, so it looks absent. */
    gate?: (deps: DomainDeps, c: Context) => void | Promise<void>;
  },
): R {
  const { auth, gate, ...route } = spec;
  const middleware: MiddlewareHandler[] = [noStore];
  if (gate) {
    middleware.push(async (c, next) => {
      await gate(c.get('deps') as DomainDeps, c);
      await next();
    });
  }
  // An API token is checked against the route's family (its first tag) and whether it writes.
  const family = (route.tags as readonly string[] | undefined)?.[0];
  if (auth) middleware.push(requireAuth(auth, { family, write: route.method !== 'get' }) as unknown as MiddlewareHandler);
  const bodyTypes = Object.keys((route.request?.body as { content?: Record<string, unknown> } | undefined)?.content ?? {});
  if (bodyTypes.includes('multipart/form-data')) middleware.push(requireMultipartBody);
  else if (route.request?.body) middleware.push(requireJsonBody, textRuleOnJsonBody);
  const query = route.request?.query as { shape?: Record<string, unknown> } | undefined;
  if (query?.shape && 'cursor' in query.shape) middleware.push(verifyCursor as unknown as MiddlewareHandler);
  const roles = auth?.roles ? ` Roles: ${auth.roles.join(', ')}.` : '';
  const config = {
    ...route,
    ...(route.request?.body ? { request: { ...route.request, body: { required: true, ...route.request.body } } } : {}),
    ...(auth ? { security: [{ bearer: [] }], 'x-scope': auth.scope, ...(auth.roles ? { 'x-roles': [...auth.roles] } : {}) } : {}),
    description: `${route.description ?? ''}${auth ? ` Scope: ${auth.scope}.${roles}` : ''}`.trim(),
    middleware: [...middleware, ...((route.middleware as MiddlewareHandler[] | undefined) ?? [])],
    responses: {
      ...withProblemBodies(route.responses as Record<string, { description: string; content?: unknown }>),
      ...(route.request ? { 400: problem('Invalid request (errors per field)') } : {}),
      ...(auth ? { 401: problem('Missing, invalid or expired token, or a token of another scope') } : {}),
      ...(auth?.roles ? { 403: problem('Role not allowed') } : {}),
      429: problem('Rate limited (Retry-After)'),
    },
  };
  return createRoute(config as unknown as RouteConfig) as unknown as R;
}

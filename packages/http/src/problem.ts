import type { ErrorType } from '@svc/domain';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** RFC 9457 problem document; `errors` maps a field to its reason. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors: Record<string, string>;
  [extra: string]: unknown;
}

export type ProblemSlug =
  | ErrorType
  | 'route-not-found'
  | 'method-not-allowed'
  | 'malformed-json'
  | 'unsupported-media-type'
  | 'payload-too-large'
  | 'bad-request'
  | 'internal';

const TITLES: Record<ProblemSlug, [number, string]> = {
  validation: [400, 'Invalid request'],
  'malformed-json': [400, 'Malformed JSON'],
  'bad-request': [400, 'Bad request'],
  unauthenticated: [401, 'Authentication required'],
  forbidden: [403, 'Forbidden'],
  'not-found': [404, 'Not found'],
  'route-not-found': [404, 'Not found'],
  'method-not-allowed': [405, 'Method not allowed'],
  conflict: [409, 'Conflict'],
  'payload-too-large': [413, 'Payload too large'],
  unprocessable: [422, 'Unprocessable content'],
  'unsupported-media-type': [415, 'Unsupported media type'],
  'rate-limited': [429, 'Too many requests'],
  internal: [500, 'Internal error'],
  'bad-gateway': [502, 'Bad gateway'],
  unavailable: [503, 'Service unavailable'],
  timeout: [504, 'Gateway timeout'],
};

/** Stable problem type URIs: compare these, never the title or detail text. */
export const problemType = (slug: ProblemSlug): string => `urn:svc:problem:${slug}`;
export const statusOf = (slug: ProblemSlug): number => TITLES[slug][0];

export function problemBody(
  slug: ProblemSlug,
  detail: string,
  errors: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): Problem {
  const [status, title] = TITLES[slug];
  return { type: problemType(slug), title, status, detail, errors, ...extra };
}

export function problemResponse(
  c: Context,
  slug: ProblemSlug,
  detail: string,
  errors: Record<string, string> = {},
  opts: { headers?: Record<string, string>; extra?: Record<string, unknown> } = {},
): Response {
  const body = problemBody(slug, detail, errors, opts.extra);
  return c.body(JSON.stringify(body), body.status as ContentfulStatusCode, {
    'content-type': 'application/problem+json',
    ...opts.headers,
  });
}

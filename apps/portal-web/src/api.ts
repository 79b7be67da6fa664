import { ApiError, authMiddleware, BrowserSession, type Problem } from '@svc/api-client';
import type { components, paths } from '@svc/api-client/portal';
import createClient, { type Client } from 'openapi-fetch';
import { PORTAL_API, ROOT_PREFIX } from './paths.ts';

export type PortalSchemas = components['schemas'];
export type PortalClient = Client<paths>;

/**
 * The one session and client of this tab: the access token in memory only, the refresh token in
 * the HttpOnly cookie the sign-in routes set with `?session=cookie` (BrowserSession refreshes
 * through it on load and on a 401).
 */
export const session = new BrowserSession(`${PORTAL_API}/auth`);
export const api: PortalClient = createClient<paths>({ baseUrl: ROOT_PREFIX });
api.use(authMiddleware(session));

/** A refusal as the server wrote it: the problem document with any extra members (`code`: a refused sign-in's reason). */
export type PortalProblem = Problem & { code?: string };

/** The data of an answer, or throws ApiError carrying the whole problem document. */
export async function unwrap<T>(answer: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await answer;
  if (error !== undefined || !response.ok) {
    const p = (error && typeof error === 'object' ? error : {}) as Partial<PortalProblem>;
    throw new ApiError({
      ...p,
      type: p.type ?? 'about:blank',
      title: p.title ?? response.statusText,
      status: p.status ?? response.status,
      detail: p.detail ?? response.statusText,
      errors: p.errors ?? {},
    } as PortalProblem);
  }
  return data as T;
}

export const problemOf = (err: unknown): PortalProblem | null => (err instanceof ApiError ? (err.problem as PortalProblem) : null);

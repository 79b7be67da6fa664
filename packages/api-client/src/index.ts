import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components as AdminComponents, paths as AdminPaths } from './gen/admin.ts';

export type { AdminComponents, AdminPaths };
export type AdminSchemas = AdminComponents['schemas'];
export type AdminClient = Client<AdminPaths>;

/** A problem+json answer (RFC 9457) as every route refuses. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors: Record<string, string>;
}

export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail || problem.title);
    this.name = 'ApiError';
  }
}

interface WebLocks {
  request<T>(name: string, callback: () => Promise<T>): Promise<T>;
}

/**
 * A browser session against one surface (issue 30.3): the access token in memory only, the
 * refresh token in the HttpOnly cookie the server sets (`?session=cookie`), never in storage a
 * script can read. A reload or a new tab starts with `resume()`: one refresh through the cookie.
 * Refreshes are serialized across the browser's tabs (Web Locks): two tabs presenting the same
 * refresh token at once would look like token theft to the server (spec 3.2: a used token
 * presented again revokes every session).
 */
export class BrowserSession {
  private accessToken: string | null = null;
  private expiresAt = 0;
  private inflight: Promise<boolean> | null = null;
  private readonly listeners = new Set<(signedIn: boolean) => void>();

  constructor(private readonly authBase: string) {}

  get signedIn(): boolean {
    return this.accessToken !== null;
  }

  onChange(listener: (signedIn: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The tokens a sign-in route answered with ?session=cookie. */
  accept(tokens: { access_token: string; expires_in: number }): void {
    this.accessToken = tokens.access_token;
    this.expiresAt = Date.now() + tokens.expires_in * 1000;
    for (const l of this.listeners) l(true);
  }

  /** The access token, refreshed first when it is about to expire; null when signed out. */
  async token(): Promise<string | null> {
    if (this.accessToken && Date.now() < this.expiresAt - 30_000) return this.accessToken;
    if (this.accessToken || this.inflight) await this.refresh();
    return this.accessToken;
  }

  /** One refresh through the cookie (joined by concurrent callers); false when there is no session. */
  refresh(): Promise<boolean> {
    this.inflight ??= this.lockedRefresh().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  resume(): Promise<boolean> {
    return this.refresh();
  }

  /** Forget the session here (the caller revokes it on the server first). */
  clear(): void {
    const was = this.accessToken !== null;
    this.accessToken = null;
    this.expiresAt = 0;
    if (was) for (const l of this.listeners) l(false);
  }

  private async lockedRefresh(): Promise<boolean> {
    const run = () => this.refreshOnce();
    // Web Locks where the runtime has them (every current browser); a plain call elsewhere.
    const locks = (globalThis as { navigator?: { locks?: WebLocks } }).navigator?.locks;
    return locks ? locks.request(`svc-refresh:${this.authBase}`, run) : run();
  }

  private async refreshOnce(): Promise<boolean> {
    const res = await fetch(`${this.authBase}/refresh?session=cookie`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
      credentials: 'same-origin',
    }).catch(() => null);
    if (res?.ok) {
      this.accept((await res.json()) as { access_token: string; expires_in: number });
      return true;
    }
    // A network failure keeps the session (the next call tries again); a refusal ends it.
    if (res) this.clear();
    return false;
  }
}

/**
 * An openapi-fetch client for the admin API at `apiBase` ('/api/v1' or behind a prefix): every
 * request carries the session's access token; a 401 refreshes once and retries.
 */
export function createAdminClient(apiBase: string, session: BrowserSession): AdminClient {
  // Paths in the generated types start with /api/v1: the base is what comes before it.
  const client = createClient<AdminPaths>({ baseUrl: apiBase.replace(/\/api\/v1\/?$/, '') });
  client.use(authMiddleware(session));
  return client;
}

export function authMiddleware(session: BrowserSession): Middleware {
  // A copy of each request as sent (its body is consumed by fetch), for the one retry.
  const copies = new WeakMap<Request, Request>();
  return {
    async onRequest({ request }) {
      const token = await session.token();
      if (token) request.headers.set('authorization', `Bearer ${token}`);
      copies.set(request, request.clone());
      return request;
    },
    async onResponse({ request, response }) {
      const copy = copies.get(request);
      copies.delete(request);
      if (response.status !== 401 || !copy || !session.signedIn) return response;
      if (!(await session.refresh())) return response;
      copy.headers.set('authorization', `Bearer ${await session.token()}`);
      return fetch(copy);
    },
  };
}

/** The data of an openapi-fetch answer, or throws ApiError with its problem document. */
export async function unwrap<T>(answer: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await answer;
  if (error !== undefined || !response.ok) {
    const p = (error ?? {}) as Partial<Problem>;
    throw new ApiError({
      type: p.type ?? 'about:blank',
      title: p.title ?? response.statusText,
      status: p.status ?? response.status,
      detail: p.detail ?? response.statusText,
      errors: p.errors ?? {},
    });
  }
  return data as T;
}

import { request as httpRequest } from 'node:http';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string | undefined;
  headers?: Record<string, string>;
  /** Raw body sent as is (malformed JSON, other content types). */
  raw?: string;
}

/** Minimal fetch wrapper for tests: real HTTP, JSON in and out, no retries (but a GET on a socket reset before any answer). */
export function createApiClient(baseUrl: string) {
  async function call<T = any>(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let payload: string | undefined;
    if (opts.raw !== undefined) payload = opts.raw;
    else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${baseUrl}${path}`, { method, headers, body: payload }).catch((err: unknown) => {
      // A kept-alive socket the server closed as the request went out (its idle timeout firing
      // late on a loaded machine) fails before any answer: a GET is sent again once, as browsers do.
      const code = (err as { cause?: { code?: string } }).cause?.code;
      if (method === 'GET' && (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET')) return fetch(`${baseUrl}${path}`, { method, headers });
      throw err;
    });
    const text = await res.text();
    let parsed: unknown = text;
    if (/json/.test(res.headers.get('content-type') ?? '') && text) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }
  return {
    baseUrl,
    call,
    get: <T = any>(path: string, opts?: RequestOptions) => call<T>('GET', path, undefined, opts),
    post: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => call<T>('POST', path, body, opts),
    patch: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => call<T>('PATCH', path, body, opts),
    put: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => call<T>('PUT', path, body, opts),
    delete: <T = any>(path: string, opts?: RequestOptions) => call<T>('DELETE', path, undefined, opts),
  };
}
export type ApiClient = ReturnType<typeof createApiClient>;

/**
 * Walks a cursor-paginated list to its end, `limit` items a page, and returns the ids in the
 * order the pages gave them. Fails on a non-200 page or a page over the limit, and after
 * `maxPages` (a cursor that never ends). `between` runs after each page (changes made while
 * a walk is under way).
 */
export async function pageAll(
  api: ApiClient,
  path: string,
  opts: { limit: number; token: string; maxPages?: number; between?: (page: number) => Promise<void> },
): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let n = 0; n < (opts.maxPages ?? 200); n++) {
    const sep = path.includes('?') ? '&' : '?';
    const res: ApiResponse = await api.get(`${path}${sep}limit=${opts.limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
      token: opts.token,
    });
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text}`);
    if (res.body.items.length > opts.limit) throw new Error(`GET ${path}: ${res.body.items.length} items on a page of ${opts.limit}`);
    ids.push(...res.body.items.map((i: { id: string }) => i.id));
    cursor = res.body.next_cursor;
    if (!cursor) return ids;
    await opts.between?.(n);
  }
  throw new Error(`GET ${path}: still a next_cursor after ${opts.maxPages ?? 200} pages`);
}

/**
 * POSTs a body the server is expected to refuse before reading it whole (413). It goes on a
 * connection of its own, marked close: the server answers and then closes the connection,
 * and a pooled fetch connection would otherwise be reused by the next request and reset
 * (ECONNRESET). An error while still writing after the answer arrived is not a failure.
 */
export function oversizedPost(url: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<ApiResponse> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', ...headers, connection: 'close' }, agent: false },
      (r) => {
        answered = true;
        const chunks: Buffer[] = [];
        r.on('data', (d: Buffer) => chunks.push(d));
        r.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const responseHeaders = new Headers();
          for (const [k, v] of Object.entries(r.headers)) if (typeof v === 'string') responseHeaders.set(k, v);
          let parsed: unknown = text;
          if (/json/.test(responseHeaders.get('content-type') ?? '') && text) parsed = JSON.parse(text);
          resolve({ status: r.statusCode ?? 0, headers: responseHeaders, body: parsed, text });
        });
        r.on('error', reject);
      },
    );
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    req.end(body);
  });
}

/** The cookies an answer set, as a browser sends them back (`name=value; …`); '' when none. */
export const cookiesOf = (res: { headers: Headers }): string =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');

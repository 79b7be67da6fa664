import type { ApiClient, ApiResponse } from '@svc/testkit';

type RequestOptions = NonNullable<Parameters<ApiClient['get']>[1]>;

interface Cookie {
  name: string;
  value: string;
  path: string;
  attributes: string[];
}

/**
 * One browser's cookie jar, as the OAuth routes need it: a cookie is kept by name and path,
 * sent to requests whose path is under its Path, and removed by Max-Age=0. Two instances are
 * two browsers (the victim's and the attacker's).
 */
export class Browser {
  readonly #jar = new Map<string, Cookie>();

  /** Keeps the cookies a response sets (and forgets the ones it clears). */
  take(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair = '', ...rest] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const attributes = rest.map((a) => a.trim());
      const path = attributes.find((a) => /^path=/i.test(a))?.slice(5) ?? '/';
      const key = `${name} ${path}`;
      if (attributes.some((a) => /^max-age=0$/i.test(a))) this.#jar.delete(key);
      else this.#jar.set(key, { name, value: pair.slice(eq + 1).trim(), path, attributes });
    }
  }

  /** The cookies set for exactly this path (attributes included). */
  cookiesAt(path: string): Cookie[] {
    return [...this.#jar.values()].filter((c) => c.path === path);
  }

  /** The Cookie header this browser sends with a request to `url` (a path, query allowed). */
  cookieFor(url: string): string {
    const path = new URL(url, 'http://x').pathname;
    return [...this.#jar.values()]
      .filter((c) => path === c.path || path.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }

  #opts(path: string, opts: RequestOptions = {}): RequestOptions {
    const cookie = this.cookieFor(path);
    return { ...opts, headers: { ...opts.headers, ...(cookie ? { cookie } : {}) } };
  }

  async get(api: ApiClient, path: string, opts?: RequestOptions): Promise<ApiResponse> {
    const res = await api.get(path, this.#opts(path, opts));
    this.take(res.headers);
    return res;
  }

  async post(api: ApiClient, path: string, body?: unknown, opts?: RequestOptions): Promise<ApiResponse> {
    const res = await api.post(path, body, this.#opts(path, opts));
    this.take(res.headers);
    return res;
  }

  /** A GET that does not follow redirects (the redirect route, a callback answering 302). */
  async open(baseUrl: string, path: string): Promise<Response> {
    const cookie = this.cookieFor(path);
    const res = await fetch(`${baseUrl}${path}`, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    this.take(res.headers);
    return res;
  }
}

import { DEFAULT_SUB_FORMAT_RULES, type DomainDeps, type SubLinkSettings, subErrorAnswer } from '@svc/domain';
import { type AppEnv, mapError, type PreparedAnswer, prepareAnswer } from '@svc/http';
import { HTML_PAGE_CSP, renderErrorPage } from '@svc/sub-formats';
import type { Context } from 'hono';
import { subErrorAnswerFor } from './format-memo.ts';
import type { SubLinkCaches } from './sub-link-caches.ts';

/**
 * Errors of GET /sub/{token} for people (issue 28.10): a browser that opens an unknown, rotated
 * or malformed link, or one we fail to answer, gets a page in the link page's style saying what
 * to do (@svc/sub-formats renderErrorPage), with the status it would get anyway; an app keeps
 * the problem+json document (domain subErrorAnswer decides which). The page says nothing a
 * problem did not: it depends only on the status and the operator's support link.
 */
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': HTML_PAGE_CSP,
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
} as const;

/**
 * The handler of /sub/{token} with its errors for people: a problem it answers or an error it
 * throws (mapped by @svc/http's mapError, as the root's onError would map it) becomes the page
 * when the rule gives the page, with the same status and every header but the type
 * (Retry-After, the request id). A wrapper, not a middleware, so the route still has only its
 * handler and keeps its fast path. The settings may be unreadable when the failure is the
 * database's: then the default rules decide and no support link is shown.
 */
export function withErrorPages(
  handler: (c: Context<AppEnv>) => Response | Promise<Response>,
  cachesFor: (deps: DomainDeps) => SubLinkCaches,
): (c: Context<AppEnv>) => Promise<Response> {
  return async (c) => {
    let res: Response | null = null;
    let thrown: unknown;
    try {
      res = await handler(c);
    } catch (err) {
      thrown = err;
    }
    if (res && !res.headers.get('content-type')?.startsWith('application/problem+json')) return res;
    const ua = c.req.header('user-agent');
    const accept = c.req.header('accept');
    const deps = c.get('deps');
    let settings: SubLinkSettings | null = null;
    try {
      settings = await cachesFor(deps).settings();
    } catch {}
    const answer = settings ? subErrorAnswerFor(settings, ua, accept) : subErrorAnswer(DEFAULT_SUB_FORMAT_RULES, ua, accept);
    if (answer !== 'page') {
      if (!res) throw thrown;
      return res;
    }
    const problem = res ?? mapError(thrown, c, deps.log.child({ request_id: c.get('requestId') }));
    const headers = new Headers(problem.headers);
    headers.delete('content-length');
    for (const [k, v] of Object.entries(PAGE_HEADERS)) headers.set(k, v);
    return new Response(renderErrorPage(problem.status, { supportUrl: settings?.support_url }), { status: problem.status, headers });
  };
}

/** The 404 page as the fast path sends it: the bytes and headers withErrorPages makes of the handler's 404. */
const notFoundPages = new WeakMap<SubLinkSettings, PreparedAnswer | null>();
export function preparedNotFoundPage(settings: SubLinkSettings): PreparedAnswer | null {
  let held = notFoundPages.get(settings);
  if (held === undefined) {
    held = prepareAnswer(404, PAGE_HEADERS, Buffer.from(renderErrorPage(404, { supportUrl: settings.support_url }), 'utf8'));
    notFoundPages.set(settings, held);
  }
  return held;
}

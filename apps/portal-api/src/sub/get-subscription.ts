import type { OpenAPIHono } from '@hono/zod-openapi';
import { platformFromUserAgent } from '@svc/client-apps';
import {
  type DomainDeps,
  LEGACY_CLIENT_TYPES,
  MARZNESHIN_CLIENT_TYPES,
  publicBaseUrl,
  REMNAWAVE_CLIENT_TYPES,
  type SubFormat,
  type SubLinkSettings,
  type SubscriptionDocumentData,
} from '@svc/domain';
import {
  type AppEnv,
  acceptsGzip,
  type FastPath,
  type FastRequest,
  type PreparedAnswer,
  prepareAnswer,
  prepareProblem,
  problemResponse,
  withFastPath,
} from '@svc/http';
import {
  base64List,
  HTML_PAGE_CSP,
  renderClashMeta,
  renderHtmlPage,
  renderSingBox,
  renderXrayJson,
  type SubscriptionDocument,
  shareLinks,
} from '@svc/sub-formats';
import type { Context, Next } from 'hono';
import { deviceOf, OVER_LIMIT_HEADERS, overDeviceLimit } from './devices.ts';
import { type EncodedBody, encodedBody } from './encoded-body.ts';
import { preparedNotFoundPage, withErrorPages } from './error-page.ts';
import { subErrorAnswerFor, subFormatFor } from './format-memo.ts';
import { subscriptionHeaders, subscriptionUserinfo } from './headers.ts';
import { type LegacyInfoKind, legacyInfo, legacyUsage, legacyUsageRange } from './legacy-info.ts';
import type { SubLinkCaches } from './sub-link-caches.ts';

const RENDER: Record<Exclude<SubFormat, 'html'>, { body: (doc: SubscriptionDocument) => string; type: string; ext: string }> = {
  base64: { body: base64List, type: 'text/plain; charset=utf-8', ext: 'txt' },
  'clash-meta': { body: (doc) => renderClashMeta(doc), type: 'text/yaml; charset=utf-8', ext: 'yaml' },
  'sing-box': { body: renderSingBox, type: 'application/json; charset=utf-8', ext: 'json' },
  'xray-json': { body: renderXrayJson, type: 'application/json; charset=utf-8', ext: 'json' },
};

/**
 * GET /sub/{token} (spec 4.5; unversioned: links stay valid for years). The format comes from
 * the User-Agent by the operator's rules (settings, domain chooseSubFormat); a subscription
 * that does not serve still gets a valid document whose one entry names its state (@svc/sub-formats placeholder), so apps do
 * not error. An unknown or rotated token is a bare 404 problem: the same answer whatever the
 * token, after the same hashed lookup; a browser gets it, and any other error, as a page that
 * says what to do (withErrorPages).
 */
export function registerSubscriptionLink(app: OpenAPIHono<AppEnv>, cachesFor: (deps: DomainDeps) => SubLinkCaches) {
  /**
   * `presented`: our token, or an old panel's token or key (docs/import.md, "Old links");
   * `format`: the format an old panel's path names (its client type, 3x-ui's /json/ and /clash/);
   * `ours`: whether the path is our own /sub/{token}, whose token is looked up among ours first.
   */
  const answer = async (c: Context<AppEnv>, presented: string, format: Exclude<SubFormat, 'html'> | undefined, ours: boolean) => {
    const deps = c.get('deps');
    const caches = cachesFor(deps);
    // Held in memory already (a hit), or read from the database now (a miss; svc_sub_cache_requests_total).
    const held = ours ? caches.documentNow(presented) : undefined;
    deps.metrics.subCacheRead(held === undefined ? 'miss' : 'hit');
    let data = held === undefined && ours ? await caches.documents(presented) : (held ?? null);
    if (!data) {
      // Not one of ours: perhaps an imported panel's old link (legacy-links.ts), answered as ours.
      const match = await caches.legacy.lookup(presented);
      if (match) data = await caches.documents(match.token);
    }
    if (!data) return problemResponse(c, 'not-found', NOT_FOUND);
    // An app that names its device (x-hwid): registered, or refused over the device limit (devices.ts).
    const device = await deviceOf(c, deps, data.subscription_id);
    if (device instanceof Response) return device;
    const settings = await caches.settings();
    const base = publicBaseUrl(deps.config);
    const doc = device === 'over_limit' ? overDeviceLimit(documentOf(data, settings, base)) : documentOf(data, settings, base);
    const chosen = format ?? subFormatFor(settings, c.req.header('user-agent'), c.req.header('accept'));
    if (chosen === 'html') {
      // A person in a browser: usage, expiry, QR codes and import buttons for the apps of their
      // device, in the operator's order (the customer pages' brand, as the portal shows them).
      const { apps } = await caches.customerPages();
      const page = renderHtmlPage(doc, {
        subscriptionUrl: `${base}${new URL(c.req.url).pathname}`,
        now: deps.clock.now(),
        apps: { platform: platformFromUserAgent(c.req.header('user-agent') ?? ''), order: apps },
      });
      return c.body(page, 200, {
        ...(device === 'over_limit' ? OVER_LIMIT_HEADERS : {}),
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': HTML_PAGE_CSP,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cache-control': 'no-store',
      });
    }
    // The body is rendered once per servers array, status, format and settings (bodyOf), and
    // gzip'd once when an app takes gzip (encoded-body.ts).
    const { body, gzip } = encodedBody(bodyOf(doc, chosen, settings, RENDER[chosen].body), acceptsGzip(c.req.header('accept-encoding')));
    const headers = answerHeaders(doc, chosen, settings, base, gzip);
    return c.body(body, 200, device === 'over_limit' ? { ...headers, ...OVER_LIMIT_HEADERS } : headers);
  };
  /** An old panel's /info: the subscription's state in that panel's own JSON (legacy-info.ts). */
  const info = async (c: Context<AppEnv>, presented: string, kind: LegacyInfoKind) => {
    const caches = cachesFor(c.get('deps'));
    const match = await caches.legacy.lookup(presented);
    const data = match ? await caches.documents(match.token) : null;
    if (!match || !data) return problemResponse(c, 'not-found', NOT_FOUND);
    const settings = await caches.settings();
    const base = publicBaseUrl(c.get('deps').config);
    const doc = documentOf(data, settings, base);
    return c.json(
      legacyInfo(kind, { username: match.username, data, links: shareLinks(doc), subscriptionUrl: `${base}/sub/${match.token}` }),
    );
  };
  /** An old panel's /usage: the subscription's traffic in a range, in that panel's own JSON (legacy-info.ts). */
  const usage = async (c: Context<AppEnv>, presented: string, kind: 'marzban' | 'marzneshin') => {
    const deps = c.get('deps');
    const caches = cachesFor(deps);
    const range = legacyUsageRange(c.req.query('start'), c.req.query('end'), deps.clock.now());
    if ('error' in range) return problemResponse(c, 'validation', range.error);
    const match = await caches.legacy.lookup(presented);
    const data = match ? await caches.documents(match.token) : null;
    if (!match || !data) return problemResponse(c, 'not-found', NOT_FOUND);
    return c.json(await legacyUsage(kind, deps, { username: match.username, subscriptionId: data.subscription_id, ...range }));
  };
  const param = (c: Context<AppEnv>, name: string) => c.req.param(name) as string;

  app.get(
    '/sub/:token',
    withFastPath(
      withErrorPages((c) => answer(c, param(c, 'token'), undefined, true), cachesFor),
      subLinkFastPath(cachesFor),
    ),
  );
  // Marzban's /sub/{token}/{client_type} and /info; else Marzneshin's /sub/{username}/{key}.
  app.get(
    '/sub/:token/:second',
    withErrorPages((c) => {
      const [token, second] = [param(c, 'token'), param(c, 'second')];
      if (second === 'info') return info(c, token, 'marzban');
      if (second === 'usage') return usage(c, token, 'marzban');
      const format = LEGACY_CLIENT_TYPES[second];
      return format ? answer(c, token, format, false) : answer(c, `${token}/${second}`, undefined, false);
    }, cachesFor),
  );
  // Marzneshin's /sub/{username}/{key}/{client_type} and /info.
  app.get(
    '/sub/:username/:key/:third',
    withErrorPages((c) => {
      const [presented, third] = [`${param(c, 'username')}/${param(c, 'key')}`, param(c, 'third')];
      if (third === 'info') return info(c, presented, 'marzneshin');
      if (third === 'usage') return usage(c, presented, 'marzneshin');
      const format = MARZNESHIN_CLIENT_TYPES[third];
      return format ? answer(c, presented, format, false) : problemResponse(c, 'not-found', NOT_FOUND);
    }, cachesFor),
  );
  // 3x-ui's JSON and Clash subscription paths, for the subIds imported from it (docs/import.md).
  app.get(
    '/json/:token',
    withErrorPages((c) => answer(c, param(c, 'token'), 'xray-json', false), cachesFor),
  );
  app.get(
    '/clash/:token',
    withErrorPages((c) => answer(c, param(c, 'token'), 'clash-meta', false), cachesFor),
  );
  // Remnawave's panel paths: /api/sub/{shortUuid}, /{clientType}, /info.
  const remnawave = (c: Context<AppEnv>, key: string, second: string | undefined) => {
    if (second === undefined) return answer(c, key, undefined, false);
    if (second === 'info') return info(c, key, 'remnawave');
    const format = REMNAWAVE_CLIENT_TYPES[second];
    return format ? answer(c, key, format, false) : problemResponse(c, 'not-found', NOT_FOUND);
  };
  app.get(
    '/api/sub/:key',
    withErrorPages((c) => remnawave(c, param(c, 'key'), undefined), cachesFor),
  );
  app.get(
    '/api/sub/:key/:second',
    withErrorPages((c) => remnawave(c, param(c, 'key'), param(c, 'second')), cachesFor),
  );
  return {
    /**
     * Remnawave's subscription page answers /{shortUuid} and /{shortUuid}/{clientType} at the
     * root of its host. Registered after every other route of the app (a path one of them answers
     * never comes here): a first segment that is an imported user's link key is answered as that
     * link; anything else goes on to what the root answers otherwise.
     */
    registerRootLinks(root: OpenAPIHono<AppEnv>) {
      const rootLink = async (c: Context<AppEnv>, next: Next) => {
        const key = param(c, 'key');
        const second = c.req.param('second');
        if (!SHORT_UUID.test(key) || (second !== undefined && second !== 'info' && !REMNAWAVE_CLIENT_TYPES[second])) return next();
        const caches = cachesFor(c.get('deps'));
        if (caches.legacy.mayExistNow() === false || !(await caches.legacy.lookup(key))) return next();
        return withErrorPages((cc) => remnawave(cc, key, second), cachesFor)(c);
      };
      // The pattern keeps every path of ours out (no segment of ours is 16 characters of this
      // alphabet): /sub/{token} still has its one route, and with it its fast path.
      root.get('/:key{[A-Za-z0-9_-]{16,64}}', rootLink);
      root.get('/:key{[A-Za-z0-9_-]{16,64}}/:second{[a-z0-9-]{1,16}}', rootLink);
    },
  };
}

/** Remnawave's short uuids (16 to 64 of its nanoid alphabet): shorter root paths are never looked up. */
const SHORT_UUID = /^[A-Za-z0-9_-]{16,64}$/;

const NOT_FOUND = 'No subscription has this link.';

function documentOf(data: SubscriptionDocumentData, settings: SubLinkSettings, base: string): SubscriptionDocument {
  return {
    title: settings.title ?? new URL(base).host,
    status: data.link_status,
    upload_bytes: data.upload_bytes,
    download_bytes: data.download_bytes,
    total_bytes: data.traffic_limit_bytes,
    expires_at: data.expires_at,
    servers: data.servers,
  };
}

/**
 * The headers of a non-HTML answer (the handler's; the fast path prepares the same). Every one
 * says it varies by Accept-Encoding, as the body is gzip'd for the apps that take it (`gzip`).
 */
function answerHeaders(
  doc: SubscriptionDocument,
  format: Exclude<SubFormat, 'html'>,
  settings: SubLinkSettings,
  base: string,
  gzip: boolean,
): Record<string, string> {
  const render = RENDER[format];
  return {
    'content-type': render.type,
    vary: 'accept-encoding',
    ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    ...subscriptionHeaders(doc, {
      updateIntervalHours: settings.update_interval_hours,
      webPageUrl: settings.web_page_url ?? base,
      ...(settings.support_url ? { supportUrl: settings.support_url } : {}),
      filename: `${doc.title}.${render.ext}`,
    }),
  };
}

/** A link as apps fetch it: the token (what TOKEN_RE in the domain accepts), maybe a plain query. */
const SUB_URL = /^\/sub\/([A-Za-z0-9_-]{43})(?:\?[A-Za-z0-9\-._~!$&()*+,;=:@/?]*)?$/;

/**
 * GET /sub/{token} before Hono (@svc/http fast-path.ts), for the answers apps fetch: the
 * document is read as the handler reads it (from the cache when it holds it, else the same
 * batched read, awaited), and the answer is the one the handler would send, from an answer
 * prepared once per body (servers, status, format, settings) with this read's usage put in
 * its subscription-userinfo. An unknown token gets the handler's 404: the problem, or for a
 * browser the page withErrorPages makes of it (the same bytes, prepared once per settings). The HTML page
 * (rendered per request), settings not read yet, odd URLs and failed reads go to the handler.
 */
function subLinkFastPath(cachesFor: (deps: DomainDeps) => SubLinkCaches): FastPath {
  let notFound: PreparedAnswer | null | undefined;
  const answerTo = (
    data: SubscriptionDocumentData | null,
    settings: SubLinkSettings,
    format: Exclude<SubFormat, 'html'>,
    deps: DomainDeps,
    req: FastRequest,
  ): PreparedAnswer | undefined => {
    if (data === null) {
      // An old link of an imported panel may look like ours: the handler asks (legacy-links.ts).
      if (cachesFor(deps).legacy.mayExistNow() !== false) return undefined;
      if (subErrorAnswerFor(settings, req.userAgent, req.accept) === 'page') return preparedNotFoundPage(settings) ?? undefined;
      if (notFound === undefined) notFound = prepareProblem('not-found', NOT_FOUND);
      return notFound ?? undefined;
    }
    const gzip = req.gzip === true;
    const held = rendered.get(data)?.get(renderedKey(format, gzip));
    if (held && held.settings === settings) return held.answer;
    const t = templateOf(data, format, settings, baseOf(deps), gzip);
    if (!t) return undefined;
    const head = t.prepared.head.slice();
    head[t.infoSlot] = subscriptionUserinfo({
      upload_bytes: data.upload_bytes,
      download_bytes: data.download_bytes,
      total_bytes: data.traffic_limit_bytes,
      expires_at: data.expires_at,
    });
    const answer: PreparedAnswer = { status: t.prepared.status, head, slot: t.prepared.slot, body: t.prepared.body };
    // A cached document is asked for again: its whole answer is kept as long as it is.
    if (deps.config.http.sub_cache_seconds > 0) {
      let forData = rendered.get(data);
      if (!forData) {
        forData = new Map();
        rendered.set(data, forData);
      }
      forData.set(renderedKey(format, gzip), { settings, answer });
    }
    return answer;
  };
  return {
    probe: `/sub/${'A'.repeat(43)}`,
    answer(req, deps) {
      const m = SUB_URL.exec(req.url);
      // A fetch naming its device registers it: the handler's (devices.ts).
      if (!m || req.hwid) return undefined;
      const caches = cachesFor(deps);
      // The settings as read when the request came (the handler reads them after the
      // document: either is an answer of that moment). Not worth a read when the answer
      // would be the page, or the settings are not read yet.
      const settings = caches.settingsNow();
      if (!settings) return undefined;
      const format = subFormatFor(settings, req.userAgent, req.accept);
      if (format === 'html') return undefined;
      const token = m[1] as string;
      // Counted as the handler counts (hit: the document was in memory), once the answer is this
      // path's; an answer left to the handler is counted there.
      const data = caches.documentNow(token);
      if (data !== undefined) return counted(answerTo(data, settings, format, deps, req), 'hit', deps);
      return caches.documents(token).then((d) => counted(answerTo(d, settings, format, deps, req), 'miss', deps));
    },
  };
}

function counted(answer: PreparedAnswer | undefined, result: 'hit' | 'miss', deps: DomainDeps): PreparedAnswer | undefined {
  if (answer) deps.metrics.subCacheRead(result);
  return answer;
}

const bases = new WeakMap<DomainDeps['config'], string>();
function baseOf(deps: DomainDeps): string {
  let base = bases.get(deps.config);
  if (base === undefined) {
    base = publicBaseUrl(deps.config);
    bases.set(deps.config, base);
  }
  return base;
}

/** Whole answers of cached documents by the document (they live exactly as long as it is cached), by format and encoding. */
const rendered = new WeakMap<SubscriptionDocumentData, Map<string, { settings: SubLinkSettings; answer: PreparedAnswer }>>();
const renderedKey = (format: SubFormat, gzip: boolean) => (gzip ? `${format}+gzip` : format);

const USERINFO_PLACEHOLDER = 'usage';

interface AnswerTemplate {
  settings: SubLinkSettings;
  base: string;
  /** The answer with a placeholder at `infoSlot` (subscription-userinfo's value). */
  prepared: PreparedAnswer;
  infoSlot: number;
}

/**
 * Answers prepared once per body, by the servers array they list (the domain hands the same
 * array to every read of a subscription until what it is granted changes), the link status,
 * the format, whether the app takes gzip and the settings: every header but
 * subscription-userinfo and the request id is the same for all of them. Null: node would
 * refuse a header (the handler answers).
 */
const templates = new WeakMap<SubscriptionDocument['servers'], Map<string, AnswerTemplate | null>>();
function templateOf(
  data: SubscriptionDocumentData,
  format: Exclude<SubFormat, 'html'>,
  settings: SubLinkSettings,
  base: string,
  takesGzip: boolean,
) {
  let byKey = templates.get(data.servers);
  if (!byKey) {
    byKey = new Map();
    templates.set(data.servers, byKey);
  }
  const key = `${format}\0${data.link_status}\0${takesGzip ? 'gzip' : ''}`;
  const held = byKey.get(key);
  if (held !== undefined && (held === null || (held.settings === settings && held.base === base))) return held;
  const doc = documentOf(data, settings, base);
  const { body, gzip } = encodedBody(bodyOf(doc, format, settings, RENDER[format].body), takesGzip);
  const prepared = prepareAnswer(
    200,
    { ...answerHeaders(doc, format, settings, base, gzip), 'subscription-userinfo': USERINFO_PLACEHOLDER },
    body,
  );
  const infoSlot = prepared ? prepared.head.indexOf('subscription-userinfo') + 1 : 0;
  const t =
    prepared && infoSlot > 0 && prepared.head[infoSlot - 1] === 'subscription-userinfo' ? { settings, base, prepared, infoSlot } : null;
  byKey.set(key, t);
  return t;
}

/**
 * Bodies by the servers array they list: an app refreshing its link reads the database again
 * (usage for the headers) but gets the same array, so its body is not rendered again. A
 * non-HTML body depends only on the servers, the link status, the format and the settings.
 */
const bodies = new WeakMap<SubscriptionDocument['servers'], Map<string, { settings: SubLinkSettings; body: EncodedBody }>>();
function bodyOf(
  doc: SubscriptionDocument,
  format: SubFormat,
  settings: SubLinkSettings,
  render: (doc: SubscriptionDocument) => string,
): EncodedBody {
  let byKey = bodies.get(doc.servers);
  if (!byKey) {
    byKey = new Map();
    bodies.set(doc.servers, byKey);
  }
  const key = `${format}\0${doc.status}`;
  const held = byKey.get(key);
  if (held && held.settings === settings) return held.body;
  // Kept as the bytes sent (UTF-8), so no answer encodes them again; gzip'd when first asked for.
  const body: EncodedBody = { identity: Buffer.from(render(doc), 'utf8') };
  byKey.set(key, { settings, body });
  return body;
}

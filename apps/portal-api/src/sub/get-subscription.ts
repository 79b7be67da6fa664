import type { OpenAPIHono } from '@hono/zod-openapi';
import { type DomainDeps, publicBaseUrl, type SubFormat, type SubLinkSettings, type SubscriptionDocumentData } from '@svc/domain';
import { type AppEnv, type FastPath, type PreparedAnswer, prepareAnswer, problemResponse, withFastPath } from '@svc/http';
import {
  base64List,
  HTML_PAGE_CSP,
  renderClashMeta,
  renderHtmlPage,
  renderSingBox,
  renderXrayJson,
  type SubscriptionDocument,
} from '@svc/sub-formats';
import type { Context } from 'hono';
import { subFormatFor } from './format-memo.ts';
import { subscriptionHeaders } from './headers.ts';
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
 * token, after the same hashed lookup.
 */
export function registerSubscriptionLink(app: OpenAPIHono<AppEnv>, cachesFor: (deps: DomainDeps) => SubLinkCaches): void {
  const handler = async (c: Context<AppEnv>) => {
    const deps = c.get('deps');
    const caches = cachesFor(deps);
    const data = await caches.documents(c.req.param('token') as string);
    if (!data) return problemResponse(c, 'not-found', 'No subscription has this link.');
    const settings = await caches.settings();
    const base = publicBaseUrl(deps.config);
    const doc: SubscriptionDocument = {
      title: settings.title ?? new URL(base).host,
      status: data.link_status,
      upload_bytes: data.upload_bytes,
      download_bytes: data.download_bytes,
      total_bytes: data.traffic_limit_bytes,
      expires_at: data.expires_at,
      servers: data.servers,
    };
    const format = subFormatFor(settings, c.req.header('user-agent'), c.req.header('accept'));
    if (format === 'html') {
      // A person in a browser: usage, expiry, QR codes and import buttons for the apps.
      const page = renderHtmlPage(doc, { subscriptionUrl: `${base}/sub/${c.req.param('token')}`, now: deps.clock.now() });
      return c.body(page, 200, {
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': HTML_PAGE_CSP,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cache-control': 'no-store',
      });
    }
    // A cached answer (the same data object) is rendered once per format and settings; so is
    // a body whose servers are the same (the domain hands the same array to every read of a
    // subscription until what it is granted changes), whatever the usage in the headers.
    let forData = rendered.get(data);
    if (!forData) {
      forData = new Map();
      rendered.set(data, forData);
    }
    let out = forData.get(format);
    if (!out || out.settings !== settings) {
      const render = RENDER[format];
      const body = bodyOf(doc, format, settings, render.body);
      const headers = {
        'content-type': render.type,
        ...subscriptionHeaders(doc, {
          updateIntervalHours: settings.update_interval_hours,
          webPageUrl: settings.web_page_url ?? base,
          ...(settings.support_url ? { supportUrl: settings.support_url } : {}),
          filename: `${doc.title}.${render.ext}`,
        }),
      };
      out = { settings, body, headers, prepared: prepareAnswer(200, headers, body) };
      forData.set(format, out);
    }
    return c.body(out.body, 200, out.headers);
  };
  app.get('/sub/:token', withFastPath(handler, subLinkFastPath(cachesFor)));
}

/** Rendered answers by the document they came from: they live exactly as long as it is cached. */
const rendered = new WeakMap<SubscriptionDocumentData, Map<SubFormat, RenderedAnswer>>();

interface RenderedAnswer {
  settings: SubLinkSettings;
  body: Buffer<ArrayBuffer>;
  headers: Record<string, string>;
  /** The same answer ready for the fast path (null: left to Hono). */
  prepared: PreparedAnswer | null;
}

/** A link as apps fetch it: the token (what TOKEN_RE in the domain accepts), maybe a plain query. */
const SUB_URL = /^\/sub\/([A-Za-z0-9_-]{43})(?:\?[A-Za-z0-9\-._~!$&()*+,;=:@/?]*)?$/;

/**
 * The cached answer of GET /sub/{token}, given before Hono (@svc/http fast-path.ts): when the
 * document and settings are cached and read, the format is not the HTML page (rendered per
 * request) and this very answer was rendered before for this document, format and settings,
 * it is the one the handler above would send. Anything else (a miss, an unknown token, the
 * page, odd URLs) goes to the handler.
 */
function subLinkFastPath(cachesFor: (deps: DomainDeps) => SubLinkCaches): FastPath {
  return {
    probe: `/sub/${'A'.repeat(43)}`,
    active: (deps) => deps.config.http.sub_cache_seconds > 0,
    answer(req, deps) {
      const m = SUB_URL.exec(req.url);
      if (!m) return undefined;
      const caches = cachesFor(deps);
      const data = caches.documentNow(m[1] as string);
      if (!data) return undefined;
      const settings = caches.settingsNow();
      if (!settings) return undefined;
      const format = subFormatFor(settings, req.userAgent, req.accept);
      if (format === 'html') return undefined;
      const out = rendered.get(data)?.get(format);
      if (!out || out.settings !== settings) return undefined;
      return out.prepared ?? undefined;
    },
  };
}

/**
 * Bodies by the servers array they list: an app refreshing its link reads the database again
 * (usage for the headers) but gets the same array, so its body is not rendered again. A
 * non-HTML body depends only on the servers, the link status, the format and the settings.
 */
const bodies = new WeakMap<SubscriptionDocument['servers'], Map<string, { settings: SubLinkSettings; body: Buffer<ArrayBuffer> }>>();
function bodyOf(
  doc: SubscriptionDocument,
  format: SubFormat,
  settings: SubLinkSettings,
  render: (doc: SubscriptionDocument) => string,
): Buffer<ArrayBuffer> {
  let byKey = bodies.get(doc.servers);
  if (!byKey) {
    byKey = new Map();
    bodies.set(doc.servers, byKey);
  }
  const key = `${format}\0${doc.status}`;
  const held = byKey.get(key);
  if (held && held.settings === settings) return held.body;
  // Kept as the bytes sent (UTF-8), so no answer encodes them again.
  const body = Buffer.from(render(doc), 'utf8');
  byKey.set(key, { settings, body });
  return body;
}

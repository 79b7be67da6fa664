import type { OpenAPIHono } from '@hono/zod-openapi';
import {
  chooseSubFormat,
  type DomainDeps,
  publicBaseUrl,
  type SubFormat,
  type SubLinkSettings,
  type SubscriptionDocumentData,
} from '@svc/domain';
import { type AppEnv, problemResponse } from '@svc/http';
import {
  base64List,
  HTML_PAGE_CSP,
  renderClashMeta,
  renderHtmlPage,
  renderSingBox,
  renderXrayJson,
  type SubscriptionDocument,
} from '@svc/sub-formats';
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
  app.get('/sub/:token', async (c) => {
    const deps = c.get('deps');
    const caches = cachesFor(deps);
    const data = await caches.documents(c.req.param('token'));
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
    const format = chooseSubFormat(settings.format_rules, c.req.header('user-agent'), c.req.header('accept'));
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
      out = {
        settings,
        body: bodyOf(doc, format, settings, render.body),
        headers: {
          'content-type': render.type,
          ...subscriptionHeaders(doc, {
            updateIntervalHours: settings.update_interval_hours,
            webPageUrl: settings.web_page_url ?? base,
            ...(settings.support_url ? { supportUrl: settings.support_url } : {}),
            filename: `${doc.title}.${render.ext}`,
          }),
        },
      };
      forData.set(format, out);
    }
    return c.body(out.body, 200, out.headers);
  });
}

/** Rendered answers by the document they came from: they live exactly as long as it is cached. */
const rendered = new WeakMap<
  SubscriptionDocumentData,
  Map<SubFormat, { settings: SubLinkSettings; body: string; headers: Record<string, string> }>
>();

/**
 * Bodies by the servers array they list: an app refreshing its link reads the database again
 * (usage for the headers) but gets the same array, so its body is not rendered again. A
 * non-HTML body depends only on the servers, the link status, the format and the settings.
 */
const bodies = new WeakMap<SubscriptionDocument['servers'], Map<string, { settings: SubLinkSettings; body: string }>>();
function bodyOf(
  doc: SubscriptionDocument,
  format: SubFormat,
  settings: SubLinkSettings,
  render: (doc: SubscriptionDocument) => string,
): string {
  let byKey = bodies.get(doc.servers);
  if (!byKey) {
    byKey = new Map();
    bodies.set(doc.servers, byKey);
  }
  const key = `${format}\0${doc.status}`;
  const held = byKey.get(key);
  if (held && held.settings === settings) return held.body;
  const body = render(doc);
  byKey.set(key, { settings, body });
  return body;
}

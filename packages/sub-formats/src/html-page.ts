import { formatDateTimeUtc } from '@svc/format';
import { type AppLinkOptions, appLinks } from './app-links.ts';
import { PAGE_SCRIPT } from './html-assets.ts';
import { escapeHtml as h } from './html-escape.ts';
import { pageHead } from './html-head.ts';
import { relativeExpiry, STATUS_TEXT, usage } from './html-text.ts';
import type { ServerEntry, SubscriptionDocument } from './model.ts';
import { placeholderServers } from './placeholder.ts';
import { qrSvg } from './qr-svg.ts';
import { shareLink, shareLinkSkipReason } from './share-links.ts';

/**
 * The page a customer sees when opening their subscription link in a browser: one self-contained
 * HTML5 document (inline CSS and SVG, no external request of any kind, a 10-line inline script
 * for the copy buttons that the page does not need: every link is also selectable text). It
 * shows the state in words, the traffic, the expiry, a QR code of the subscription URL, one-tap
 * import links for the common apps (`app-links.ts`), and each server's share link with its own
 * QR code. Every value from the document is HTML-escaped. Pure and synchronous: `now` is passed
 * in, so the same input gives the same bytes.
 *
 * Servers follow the share-link format's rule (`shareLinkSkipReason`): what no share link can
 * express is left out. When that leaves nothing, or the subscription does not serve (expired,
 * limited, disabled, pending), the page lists no server and shows the placeholder's name instead
 * (the entry the apps show, `placeholderServers`), never the placeholder's dummy link.
 */

export interface HtmlPageOptions {
  /** The URL the page is served at (`{public base}/sub/{token}`): QR code, import links, copy field. */
  subscriptionUrl: string;
  /** For "in 30 days" / "expired 3 days ago". */
  now: Date;
  /** The page's `lang` (BCP 47, default "en"). The texts are English; this only labels them. */
  locale?: string;
  /** The browser's platform and the operator's app order: which import buttons, in which order (app-links.ts). */
  apps?: AppLinkOptions;
}

export function renderHtmlPage(doc: SubscriptionDocument, opts: HtmlPageOptions): string {
  const url = httpUrl(opts.subscriptionUrl);
  const lang = opts.locale && /^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/.test(opts.locale) ? opts.locale : 'en';
  const title = doc.title.trim() || 'Subscription';
  return [
    ...pageHead(lang, title),
    headerSection(doc, title),
    usageSection(doc),
    expirySection(doc, opts.now),
    importSection(title, url, opts.apps),
    serversSection(doc),
    '</main>',
    `<script>${PAGE_SCRIPT}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** The servers the page lists (document order), or the placeholder's name when it lists none. */
export function pageServers(doc: SubscriptionDocument): { servers: ServerEntry[]; note?: string } {
  const usable = doc.status === 'active' ? doc.servers.filter((s) => !shareLinkSkipReason(s)) : [];
  const [placeholder] = placeholderServers(doc, usable);
  return placeholder ? { servers: [], note: placeholder.name } : { servers: usable };
}

function httpUrl(raw: string): string {
  let protocol: string;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    throw new Error(`subscriptionUrl is not an absolute URL: ${raw}`);
  }
  if (protocol !== 'https:' && protocol !== 'http:') throw new Error(`subscriptionUrl must be http(s): ${raw}`);
  return raw;
}

function headerSection(doc: SubscriptionDocument, title: string): string {
  const status = STATUS_TEXT[doc.status];
  return [
    '<header>',
    `<h1>${h(title)}</h1>`,
    `<p id="status" class="status status-${doc.status}"><strong>${h(status.label)}</strong> ${h(status.detail)}</p>`,
    '</header>',
  ].join('\n');
}

function usageSection(doc: SubscriptionDocument): string {
  const u = usage(doc);
  const amounts =
    u.percent === null
      ? `<p><strong id="used">${u.used}</strong> used · <strong id="total">${u.total}</strong> traffic</p>`
      : `<p><strong id="used">${u.used}</strong> used of <strong id="total">${u.total}</strong></p>`;
  const bar = u.percent === null ? [] : [`<progress id="usage-bar" max="100" value="${u.percent}">${u.percent}%</progress>`];
  const share = u.percent === null ? '' : `${u.percent}% used · `;
  return [
    '<section id="usage" aria-labelledby="usage-h">',
    '<h2 id="usage-h">Traffic</h2>',
    amounts,
    ...bar,
    `<p class="muted">${share}upload ${u.upload} · download ${u.download}</p>`,
    '</section>',
  ].join('\n');
}

function expirySection(doc: SubscriptionDocument, now: Date): string {
  const at = doc.expires_at;
  const text =
    at === null ? 'Never expires' : `<time datetime="${at.toISOString()}">${formatDateTimeUtc(at)}</time> · ${relativeExpiry(at, now)}`;
  return [
    '<section id="expiry" aria-labelledby="expiry-h">',
    '<h2 id="expiry-h">Valid until</h2>',
    `<p id="expiry-text">${text}</p>`,
    '</section>',
  ].join('\n');
}

function copyRow(id: string, text: string): string {
  return `<div class="copy-row"><code id="${id}">${h(text)}</code><button type="button" class="copy" data-copy="${id}">Copy</button></div>`;
}

function importSection(title: string, url: string, options: AppLinkOptions = {}): string {
  const apps = appLinks(url, title, options).map(
    (a) => `<li><a class="app" data-app="${h(a.id)}" href="${h(a.href)}">${h(a.name)}<small>${h(a.platforms)}</small></a></li>`,
  );
  return [
    '<section id="import" aria-labelledby="import-h">',
    '<h2 id="import-h">Add to your app</h2>',
    '<p class="muted">Tap your app below, or scan this code with it, or copy the link and add it as a subscription.</p>',
    qrSvg(url, 'QR code of the subscription link'),
    '<ul class="apps">',
    ...apps,
    '</ul>',
    copyRow('sub-url', url),
    '</section>',
  ].join('\n');
}

/** A server's QR code, folded; none for a link longer than a QR code holds (~2.3 kB at level M): the link is still there. */
function serverQr(link: string, name: string): string {
  let svg: string;
  try {
    svg = qrSvg(link, `QR code of ${name}`);
  } catch {
    return '';
  }
  return `<details><summary>QR code</summary>${svg}</details>`;
}

function serversSection(doc: SubscriptionDocument): string {
  const { servers, note } = pageServers(doc);
  const items = servers.map((s, i) => {
    const link = shareLink(s);
    return [
      `<li class="server" id="server-${i + 1}">`,
      `<h3>${h(s.name)}</h3>`,
      copyRow(`link-${i + 1}`, link),
      serverQr(link, s.name),
      '</li>',
    ]
      .filter(Boolean)
      .join('\n');
  });
  return [
    '<section id="servers" aria-labelledby="servers-h">',
    '<h2 id="servers-h">Servers</h2>',
    note === undefined
      ? '<p class="muted">To add a single server, copy its link or scan its code in your app.</p>'
      : `<p id="servers-note" class="muted">${h(note)}</p>`,
    ...(items.length > 0 ? ['<ol class="servers">', ...items, '</ol>'] : []),
    '</section>',
  ].join('\n');
}

export { type AppLink, type AppLinkOptions, appLinks, IMPORT_APP_IDS } from './app-links.ts';
export {
  CLASH_AUTO_GROUP,
  CLASH_SELECT_GROUP,
  type ClashMetaOptions,
  clashMetaProxy,
  clashMetaSkipReason,
  renderClashMeta,
} from './clash-meta.ts';
export { base64, base64url, canonicalJson } from './encoding.ts';
export { HTML_PAGE_CSP } from './html-assets.ts';
export { type ErrorPageOptions, renderErrorPage } from './html-error-page.ts';
export { escapeHtml } from './html-escape.ts';
export { type HtmlPageOptions, pageServers, renderHtmlPage } from './html-page.ts';
export type { Protocol, ServerEntry, SubscriptionDocument, SubscriptionStatus } from './model.ts';
export {
  PLACEHOLDER_ADDRESS,
  PLACEHOLDER_NAMES,
  PLACEHOLDER_PORT,
  PLACEHOLDER_UUID,
  placeholderServer,
  placeholderServers,
  type SkipRule,
  servedServers,
} from './placeholder.ts';
export { qrSvg } from './qr-svg.ts';
export { base64List, shareLink, shareLinkSkipReason, shareLinks } from './share-links.ts';
export { renderSingBox, SING_BOX_DIRECT, SING_BOX_SELECTOR, SING_BOX_URLTEST, singBoxOutbound, singBoxSkipReason } from './sing-box.ts';
export { unusableReason } from './stream.ts';
export { PRIVATE_CIDRS, renderXrayJson, XRAY_HTTP_PORT, XRAY_SOCKS_PORT, xrayClientConfig, xrayJsonSkipReason } from './xray-json.ts';

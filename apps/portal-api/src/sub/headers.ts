import type { SubscriptionDocument } from '@svc/sub-formats';

/**
 * Response headers client apps read from a subscription (the de-facto set of v2rayN, Clash
 * Verge, Shadowrocket, sing-box apps, Happ, Hiddify):
 * - subscription-userinfo: `upload=…; download=…; total=…; expire=…` (bytes; total 0 means
 *   unlimited; expire in Unix seconds, 0 means never);
 * - profile-update-interval: hours between automatic refreshes;
 * - profile-title: `base64:` + the title in base64 (apps decode it; keeps non-ASCII intact);
 * - content-disposition: a file name with the format's extension (Clash imports need one);
 * - profile-web-page-url and support-url when known.
 */
export function subscriptionHeaders(
  doc: SubscriptionDocument,
  opts: { updateIntervalHours: number; webPageUrl?: string; supportUrl?: string; filename: string },
): Record<string, string> {
  const headers: Record<string, string> = {
    'subscription-userinfo': subscriptionUserinfo(doc),
    'profile-update-interval': String(opts.updateIntervalHours),
    'profile-title': `base64:${Buffer.from(doc.title, 'utf8').toString('base64')}`,
    'content-disposition': `attachment; filename="${asciiFilename(opts.filename)}"; filename*=UTF-8''${encodeURIComponent(opts.filename)}`,
    'cache-control': 'no-store',
  };
  if (opts.webPageUrl) headers['profile-web-page-url'] = opts.webPageUrl;
  if (opts.supportUrl) headers['support-url'] = opts.supportUrl;
  return headers;
}

/** The subscription-userinfo value: the one header of a link's answer that changes with usage. */
export function subscriptionUserinfo(
  doc: Pick<SubscriptionDocument, 'upload_bytes' | 'download_bytes' | 'total_bytes' | 'expires_at'>,
): string {
  const expire = doc.expires_at ? Math.floor(doc.expires_at.getTime() / 1000) : 0;
  return `upload=${doc.upload_bytes}; download=${doc.download_bytes}; total=${doc.total_bytes ?? 0}; expire=${expire}`;
}

const asciiFilename = (name: string): string => name.replace(/[^\x20-\x7e]|["\\]/g, '_');

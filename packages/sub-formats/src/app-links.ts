import { appsFor, CLIENT_APPS, DEFAULT_APP_ORDER, PLATFORMS, type Platform } from '@svc/client-apps';

/**
 * One-tap import links ("deep links") for the /sub page: the apps of @svc/client-apps (the one
 * catalogue of the apps, their platforms and their links, which the portal web app uses too),
 * each wrapping the subscription URL the way that app reads it. The same URL serves every app:
 * the HTTP route picks the format by User-Agent. Apps without a link (v2rayN) are left out: the
 * page's copy field and QR code serve them.
 */
export interface AppLink {
  /** Stable id (the button's `data-app`). */
  id: string;
  name: string;
  platforms: string;
  href: string;
}

const LABEL: Record<Platform, string> = {
  android: 'Android',
  ios: 'iOS',
  windows: 'Windows',
  macos: 'macOS',
  linux: 'Linux',
  android_tv: 'Android TV',
  apple_tv: 'Apple TV',
};

export interface AppLinkOptions {
  /** The browser's platform (platformFromUserAgent): its apps only. Unknown: every app with a link. */
  platform?: Platform | null;
  /** The operator's order per platform (the customer pages' brand); a platform left out: the default. */
  order?: Partial<Record<Platform, readonly string[]>>;
}

/**
 * The import link of each app, for `platform` in the operator's order, or (no platform) every app
 * with a link in the order the platforms' lists name them; `title` names the profile where the
 * app reads a name.
 */
export function appLinks(subscriptionUrl: string, title: string, opts: AppLinkOptions = {}): AppLink[] {
  const orderOf = (p: Platform) => opts.order?.[p] ?? DEFAULT_APP_ORDER[p];
  const apps = opts.platform
    ? appsFor(opts.platform, orderOf(opts.platform))
    : [...new Set(PLATFORMS.flatMap((p) => appsFor(p, orderOf(p))))];
  return apps
    .filter((a) => a.importLink !== null)
    .map((a) => ({
      id: a.id,
      name: a.name,
      platforms: a.platforms.map((p) => LABEL[p]).join(' · '),
      href: (a.importLink as NonNullable<typeof a.importLink>)(subscriptionUrl, title),
    }));
}

/** Every catalogued app with an import link (the page's full list). */
export const IMPORT_APP_IDS: readonly string[] = CLIENT_APPS.filter((a) => a.importLink !== null).map((a) => a.id);

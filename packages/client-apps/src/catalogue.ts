/**
 * The client apps a customer connects a subscription with, and how each imports one: its own
 * deep link (URL scheme), or none (copy the link, import it in the app). Facts from the apps' own
 * sources and docs (docs/research/client-deep-links.md says which file of which app, or which
 * doc, each one comes from); `verified: false` where only the subscription pages of other panels
 * attest the link (closed-source apps without a public spec).
 *
 * Subscription URLs are `{base}/sub/{token}` with a base64url token: no `+`, `%`, `&` or `#` in
 * them, so apps that decode a query parameter twice (v2rayNG) or turn `+` into a space still get
 * the URL back. Where the app reads a query parameter it is percent-encoded anyway; where it takes
 * the rest of the path (`happ://add/<url>`) it goes raw, as the apps expect.
 */

export const PLATFORMS = ['android', 'ios', 'windows', 'macos', 'linux', 'android_tv', 'apple_tv'] as const;
export type Platform = (typeof PLATFORMS)[number];

/** What the app fetches (the server picks it by User-Agent, sub-format-rules.ts): for the guide. */
export type AppFormat = 'links' | 'clash' | 'sing-box';

export interface ClientApp {
  id: string;
  name: string;
  platforms: readonly Platform[];
  /** The deep link that imports the subscription, or null: the customer copies the link and adds it in the app. */
  importLink: ((subscriptionUrl: string, name: string) => string) | null;
  /** Where to get it, per platform (the store listing or the project's releases). */
  downloads: Partial<Record<Platform, string>>;
  format: AppFormat;
  /** The link format is checked against the app's source or official docs (else: attested by other panels only). */
  verified: boolean;
  /** Open source (the customer can check what it does). */
  openSource: boolean;
}

const enc = encodeURIComponent;

export const CLIENT_APPS: readonly ClientApp[] = [
  {
    id: 'happ',
    name: 'Happ',
    platforms: ['ios', 'android', 'windows', 'macos', 'android_tv', 'apple_tv'],
    importLink: (url) => `happ://add/${url}`,
    downloads: {
      ios: 'https://apps.apple.com/app/id6504287215',
      macos: 'https://apps.apple.com/app/id6504287215',
      android: 'https://play.google.com/store/apps/details?id=com.happproxy',
      android_tv: 'https://play.google.com/store/apps/details?id=com.happproxy',
      apple_tv: 'https://apps.apple.com/app/id6748297274',
      windows: 'https://github.com/Happ-proxy/happ-desktop/releases/latest/download/setup-Happ.x64.exe',
    },
    format: 'links',
    verified: false,
    openSource: false,
  },
  {
    id: 'v2rayng',
    name: 'v2rayNG',
    platforms: ['android', 'android_tv'],
    // The name is the link's fragment (a `name=` parameter is ignored); the handler decodes `url` twice.
    importLink: (url, name) => `v2rayng://install-config?url=${enc(url)}#${enc(name)}`,
    downloads: {
      android: 'https://github.com/2dust/v2rayNG/releases/latest',
      android_tv: 'https://github.com/2dust/v2rayNG/releases/latest',
    },
    format: 'links',
    verified: true,
    openSource: true,
  },
  {
    id: 'hiddify',
    name: 'Hiddify',
    platforms: ['android', 'ios', 'windows', 'macos', 'linux', 'android_tv'],
    // The rest of the path is the URL (not decoded); the fragment is the name.
    importLink: (url, name) => `hiddify://import/${url}#${enc(name)}`,
    downloads: {
      android: 'https://play.google.com/store/apps/details?id=app.hiddify.com',
      android_tv: 'https://play.google.com/store/apps/details?id=app.hiddify.com',
      ios: 'https://apps.apple.com/app/id6596777532',
      windows: 'https://github.com/hiddify/hiddify-app/releases/latest/download/Hiddify-Windows-Setup-x64.exe',
      macos: 'https://github.com/hiddify/hiddify-app/releases/latest/download/Hiddify-MacOS.dmg',
      linux: 'https://github.com/hiddify/hiddify-app/releases/latest/download/Hiddify-Linux-x64.AppImage',
    },
    format: 'sing-box',
    verified: true,
    openSource: true,
  },
  {
    id: 'streisand',
    name: 'Streisand',
    platforms: ['ios', 'macos'],
    importLink: (url) => `streisand://import/${url}`,
    downloads: { ios: 'https://apps.apple.com/app/id6450534064', macos: 'https://apps.apple.com/app/id6450534064' },
    format: 'links',
    verified: false,
    openSource: false,
  },
  {
    id: 'v2raytun',
    name: 'v2RayTun',
    platforms: ['ios', 'android'],
    importLink: (url) => `v2raytun://import/${url}`,
    downloads: {
      ios: 'https://apps.apple.com/app/id6476628951',
      android: 'https://play.google.com/store/apps/details?id=com.v2raytun.android',
    },
    format: 'links',
    verified: false,
    openSource: false,
  },
  {
    id: 'shadowrocket',
    name: 'Shadowrocket',
    platforms: ['ios', 'apple_tv', 'macos'],
    importLink: (url, name) => `shadowrocket://add/${url}#${enc(name)}`,
    downloads: {
      ios: 'https://apps.apple.com/app/id932747118',
      apple_tv: 'https://apps.apple.com/app/id932747118',
      macos: 'https://apps.apple.com/app/id932747118',
    },
    format: 'links',
    verified: false,
    openSource: false,
  },
  {
    id: 'sing-box',
    name: 'sing-box',
    platforms: ['android', 'ios', 'macos', 'apple_tv'],
    // libbox ParseRemoteProfileImportLink: url from the query, the name from the fragment.
    importLink: (url, name) => `sing-box://import-remote-profile?url=${enc(url)}#${enc(name)}`,
    downloads: {
      android: 'https://play.google.com/store/apps/details?id=io.nekohasekai.sfa',
      // The App Store build cannot be updated at the moment; its docs say how to get it (TestFlight).
      ios: 'https://sing-box.sagernet.org/clients/apple/',
      macos: 'https://sing-box.sagernet.org/clients/apple/',
      apple_tv: 'https://sing-box.sagernet.org/clients/apple/',
    },
    format: 'sing-box',
    verified: true,
    openSource: true,
  },
  {
    id: 'stash',
    name: 'Stash',
    platforms: ['ios', 'macos', 'apple_tv'],
    // stash.wiki: "the included URL needs to be encoded".
    importLink: (url) => `stash://install-config?url=${enc(url)}`,
    downloads: {
      ios: 'https://apps.apple.com/app/id1596063349',
      macos: 'https://apps.apple.com/app/id1596063349',
      apple_tv: 'https://apps.apple.com/app/id1596063349',
    },
    format: 'clash',
    verified: true,
    openSource: false,
  },
  {
    id: 'clash-verge',
    name: 'Clash Verge Rev',
    platforms: ['windows', 'macos', 'linux'],
    // `url` must be the last parameter (everything after it is the URL).
    importLink: (url, name) => `clash://install-config?name=${enc(name)}&url=${enc(url)}`,
    downloads: {
      windows: 'https://github.com/clash-verge-rev/clash-verge-rev/releases/latest',
      macos: 'https://github.com/clash-verge-rev/clash-verge-rev/releases/latest',
      linux: 'https://github.com/clash-verge-rev/clash-verge-rev/releases/latest',
    },
    format: 'clash',
    verified: true,
    openSource: true,
  },
  {
    id: 'flclashx',
    name: 'FlClashX',
    platforms: ['android', 'android_tv', 'windows', 'macos', 'linux'],
    importLink: (url) => `flclashx://install-config?url=${enc(url)}`,
    downloads: {
      android: 'https://github.com/pluralplay/FlClashX/releases/latest',
      android_tv: 'https://github.com/pluralplay/FlClashX/releases/latest',
      windows: 'https://github.com/pluralplay/FlClashX/releases/latest',
      macos: 'https://github.com/pluralplay/FlClashX/releases/latest',
      linux: 'https://github.com/pluralplay/FlClashX/releases/latest',
    },
    format: 'clash',
    verified: true,
    openSource: true,
  },
  {
    id: 'clash-meta-android',
    name: 'Clash Meta for Android',
    platforms: ['android'],
    importLink: (url, name) => `clashmeta://install-config?name=${enc(name)}&url=${enc(url)}`,
    downloads: { android: 'https://github.com/MetaCubeX/ClashMetaForAndroid/releases/latest' },
    format: 'clash',
    verified: true,
    openSource: true,
  },
  {
    id: 'karing',
    name: 'Karing',
    platforms: ['android', 'ios', 'windows', 'macos', 'linux', 'apple_tv'],
    // karing-docu: "Parameters must be urlencoded".
    importLink: (url, name) => `karing://install-config?url=${enc(url)}&name=${enc(name)}`,
    downloads: {
      android: 'https://karing.app/download',
      ios: 'https://apps.apple.com/app/id6472431552',
      apple_tv: 'https://apps.apple.com/app/id6472431552',
      windows: 'https://karing.app/download',
      macos: 'https://karing.app/download',
      linux: 'https://karing.app/download',
    },
    format: 'sing-box',
    verified: true,
    openSource: true,
  },
  {
    id: 'nekobox',
    name: 'NekoBox',
    platforms: ['android'],
    importLink: (url, name) => `sn://subscription?url=${enc(url)}&name=${enc(name)}`,
    downloads: { android: 'https://github.com/MatsuriDayo/NekoBoxForAndroid/releases/latest' },
    format: 'clash',
    verified: true,
    openSource: true,
  },
  {
    id: 'v2rayn',
    name: 'v2rayN',
    platforms: ['windows', 'linux', 'macos'],
    // No URL scheme: copy the link, then "Import Share Links from clipboard".
    importLink: null,
    downloads: {
      windows: 'https://github.com/2dust/v2rayN/releases/latest',
      linux: 'https://github.com/2dust/v2rayN/releases/latest',
      macos: 'https://github.com/2dust/v2rayN/releases/latest',
    },
    format: 'links',
    verified: true,
    openSource: true,
  },
  {
    id: 'throne',
    name: 'Throne',
    platforms: ['windows', 'linux', 'macos'],
    // From Throne 1.1.5 (its maintainer, throneproj/Throne#855).
    importLink: (url, name) => `throne://addsub/?url=${enc(url)}&name=${enc(name)}`,
    downloads: {
      windows: 'https://github.com/throneproj/Throne/releases/latest',
      linux: 'https://github.com/throneproj/Throne/releases/latest',
      macos: 'https://github.com/throneproj/Throne/releases/latest',
    },
    format: 'links',
    verified: false,
    openSource: true,
  },
];

/**
 * The order apps are offered in per platform when the operator chose none: widely used first,
 * then the open-source ones whose links are checked. The operator's brand settings reorder it.
 */
export const DEFAULT_APP_ORDER: Readonly<Record<Platform, readonly string[]>> = {
  android: ['happ', 'v2rayng', 'hiddify', 'flclashx', 'clash-meta-android', 'sing-box', 'v2raytun', 'karing', 'nekobox'],
  ios: ['happ', 'streisand', 'hiddify', 'shadowrocket', 'v2raytun', 'stash', 'sing-box', 'karing'],
  windows: ['hiddify', 'happ', 'clash-verge', 'flclashx', 'v2rayn', 'throne', 'karing'],
  macos: ['hiddify', 'happ', 'clash-verge', 'streisand', 'stash', 'flclashx', 'v2rayn', 'karing'],
  linux: ['hiddify', 'clash-verge', 'flclashx', 'v2rayn', 'throne', 'karing'],
  android_tv: ['happ', 'v2rayng', 'hiddify', 'flclashx'],
  apple_tv: ['happ', 'shadowrocket', 'stash', 'sing-box'],
};

const byId = new Map(CLIENT_APPS.map((a) => [a.id, a]));

export const clientApp = (id: string): ClientApp | undefined => byId.get(id);

/** The apps offered on `platform`, in `order` (ids not in the catalogue or not on the platform are skipped). */
export function appsFor(platform: Platform, order: readonly string[] = DEFAULT_APP_ORDER[platform]): ClientApp[] {
  const out: ClientApp[] = [];
  for (const id of order) {
    const app = byId.get(id);
    if (app?.platforms.includes(platform) && !out.includes(app)) out.push(app);
  }
  return out;
}

/** The deep link that imports `subscriptionUrl` into the app, named `name`; null when the app has none. */
export function importLinkFor(appId: string, subscriptionUrl: string, name: string): string | null {
  return byId.get(appId)?.importLink?.(subscriptionUrl, name) ?? null;
}

/**
 * The platform a browser runs on, from its User-Agent (the portal opens on the customer's
 * device first): iPadOS that names itself a Mac is macOS here (its apps are the iOS ones, which
 * the macOS list shares in part); a TV browser is Android TV when it says so. Plain substring
 * tests, no pattern that backtracks on what the customer's browser sends.
 */
export function platformFromUserAgent(ua: string): Platform | null {
  const s = ua.slice(0, 512).toLowerCase();
  if (s.includes('android')) return s.includes(' tv') || s.includes('aft') || s.includes('bravia') ? 'android_tv' : 'android';
  if (s.includes('iphone') || s.includes('ipad') || s.includes('ipod')) return 'ios';
  if (s.includes('appletv') || s.includes('apple tv')) return 'apple_tv';
  if (s.includes('windows')) return 'windows';
  if (s.includes('macintosh') || s.includes('mac os x')) return 'macos';
  if (s.includes('linux') || s.includes('x11')) return 'linux';
  return null;
}

import { base64 } from './encoding.ts';

/**
 * One-tap import links ("deep links") for the apps people use, each wrapping the subscription URL
 * the way that app reads it. The same URL serves every app: the HTTP route picks the format by
 * User-Agent. Only schemes with a source are listed; the source is next to each.
 *
 * Not listed: v2rayN (desktop) registers no URL scheme (2dust/v2rayN issues #4053 and #4285, both
 * closed without one): its users paste the link or scan the QR code.
 *
 * Subscription URLs here are `{base}/sub/{base64url token}`: no `%`, `+` or `#`, which matters for
 * the apps that take the URL unencoded (Happ, Hiddify, Streisand) and for v2rayNG, which
 * percent-decodes the `url` parameter a second time.
 */

export interface AppLink {
  /** Stable id (the button's `data-app`). */
  id: string;
  name: string;
  platforms: string;
  href: string;
}

const enc = encodeURIComponent;

interface AppScheme {
  id: string;
  name: string;
  platforms: string;
  link: (url: string, title: string) => string;
}

export const IMPORT_APPS: readonly AppScheme[] = [
  {
    // The URL appended as is. Sources: remnawave/subscription-page frontend/public/assets/app-config.json
    // ("urlScheme": "happ://add/", the URL concatenated unencoded), https://github.com/remnawave/subscription-page
    id: 'happ',
    name: 'Happ',
    platforms: 'iOS · Android · Windows · macOS',
    link: (url) => `happ://add/${url}`,
  },
  {
    // Host install-sub (or install-config), query parameter `url`, percent-encoded. Sources:
    // https://github.com/2dust/v2rayNG/blob/master/V2rayNG/app/src/main/AndroidManifest.xml (scheme v2rayng,
    // hosts install-config / install-sub) and .../app/src/main/java/com/v2ray/ang/ui/UrlSchemeActivity.kt
    // (getQueryParameter("url"), then URLDecoder.decode again).
    id: 'v2rayng',
    name: 'v2rayNG',
    platforms: 'Android',
    link: (url) => `v2rayng://install-sub?url=${enc(url)}`,
  },
  {
    // `hiddify://import/<sublink>#name`, the URL unencoded after "import/" (install-sub / install-config are
    // deprecated). Sources: https://github.com/hiddify/hiddify-app/wiki/URL-Scheme and
    // https://github.com/hiddify/hiddify-app/blob/main/lib/utils/link_parsers.dart (LinkParser.deep: url =
    // uri.path.substring(1) + query). No #name: the profile-title header names the profile.
    id: 'hiddify',
    name: 'Hiddify',
    platforms: 'Android · iOS · Windows · macOS · Linux',
    link: (url) => `hiddify://import/${url}`,
  },
  {
    // `streisand://import/<URL>`, unencoded. Sources: remnawave/subscription-page app-config.json
    // ("urlScheme": "streisand://import/"); Marzban's docs, advanced/url-scheme.md (`streisand://import/URL#NAME`).
    id: 'streisand',
    name: 'Streisand',
    platforms: 'iOS · macOS',
    link: (url) => `streisand://import/${url}`,
  },
  {
    // `sub://` + standard base64 of the URL. Source: remnawave/subscription-page app-config.json
    // ("urlScheme": "sub://", "isNeedBase64Encoding": true; the page appends btoa(url)).
    id: 'shadowrocket',
    name: 'Shadowrocket',
    platforms: 'iOS · macOS',
    link: (url) => `sub://${base64(url)}`,
  },
  {
    // `clash://install-config?url=<URI-encoded>`. Sources: Clash Verge Rev's docs,
    // https://github.com/clash-verge-rev/clash-verge-rev.github.io/blob/main/docs/guide/url_schemes.md;
    // Clash Meta for Android, https://github.com/MetaCubeX/ClashMetaForAndroid/blob/main/app/src/main/AndroidManifest.xml
    // (schemes clash / clashmeta, host install-config); FlClash,
    // https://github.com/chen08209/FlClash/blob/main/android/app/src/main/AndroidManifest.xml (clash / clashmeta /
    // flclash, host install-config).
    id: 'clash',
    name: 'Clash Verge Rev · FlClash · Clash Meta',
    platforms: 'Windows · macOS · Linux · Android',
    link: (url) => `clash://install-config?url=${enc(url)}`,
  },
  {
    // `sing-box://import-remote-profile?url=urlEncodedURL#urlEncodedName`, which every sing-box graphical
    // client must support. Source: https://sing-box.sagernet.org/clients/general/ (SagerNet/sing-box
    // docs/clients/general.md, "Remote" profile).
    id: 'sing-box',
    name: 'sing-box (SFA · SFI · SFM)',
    platforms: 'Android · iOS · macOS',
    link: (url, title) => `sing-box://import-remote-profile?url=${enc(url)}#${enc(title)}`,
  },
  {
    // `karing://install-config?url=xxxx&name=xxx`, parameters urlencoded. Source: Karing's docs,
    // https://github.com/KaringX/karing-docu (docs/cooperation/scheme.md, "URL Scheme").
    id: 'karing',
    name: 'Karing',
    platforms: 'Android · iOS · Windows · macOS',
    link: (url, title) => `karing://install-config?url=${enc(url)}&name=${enc(title)}`,
  },
];

/** The import link of every app, in `IMPORT_APPS` order; `title` names the profile where the scheme has a name. */
export function appLinks(subscriptionUrl: string, title: string): AppLink[] {
  return IMPORT_APPS.map(({ id, name, platforms, link }) => ({ id, name, platforms, href: link(subscriptionUrl, title) }));
}

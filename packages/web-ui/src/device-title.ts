/** What a registered device says of itself (its HWID headers). */
export interface DeviceSelf {
  model: string | null;
  os: string | null;
  os_version: string | null;
  user_agent: string | null;
}

/**
 * How a registered device is named on screen, in the panel and the portal alike: its model and
 * OS with version ("iPhone 14 Pro Max · iOS 18.3"), else the app that fetched the link, else
 * `unknown` (the caller's words for a device that said nothing of itself).
 */
export const deviceTitle = (d: DeviceSelf, unknown: string): string =>
  [d.model, [d.os, d.os_version].filter(Boolean).join(' ')].filter(Boolean).join(' · ') || d.user_agent || unknown;

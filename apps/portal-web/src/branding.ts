import { colorsTuple, createTheme, type MantineThemeOverride, mergeThemeOverrides } from '@mantine/core';
import { theme as baseTheme } from '@svc/web-ui';
import { useSyncExternalStore } from 'react';
import { useTranslation } from 'react-i18next';
import { api, type PortalSchemas, unwrap } from './api.ts';

export type Branding = PortalSchemas['PortalBranding'];

// Asked once when the app loads (twice if the first try fails), not through TanStack Query:
// its observer would come into the first load, which has no room for it (150 KiB).
let branding: Branding | undefined;
const listeners = new Set<() => void>();
const load = () => unwrap(api.GET('/portal/v1/branding'));
void load()
  .catch(() => new Promise<Branding>((r) => setTimeout(() => r(load()), 2000)))
  .then((b) => {
    branding = b;
    for (const l of listeners) l();
  })
  .catch(() => undefined);
const subscribe = (l: () => void) => {
  listeners.add(l);
  return () => listeners.delete(l);
};

/**
 * The operator's brand (GET /portal/v1/branding, public: shown before sign-in): name, logo,
 * colour, support link, announcement, welcome and the client apps per platform. One request per
 * page load; undefined (the default look) until it answers, or when it does not.
 */
export const useBranding = (): Branding | undefined => useSyncExternalStore(subscribe, () => branding);

/** A text of the brand in the reader's language (texts.<lng>.<key>), else the default one (`fallback`). */
export function useBrandText(key: 'welcome' | 'announcement'): string | null {
  const { i18n } = useTranslation();
  const b = useBranding();
  if (!b) return null;
  const own = b.texts[i18n.language as keyof Branding['texts']]?.[key];
  return own ?? (key === 'announcement' ? b.announcement : null);
}

type Rgb = [number, number, number];
const parse = (hex: string): Rgb => [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)) as Rgb;
const hex = (c: Rgb) => `#${c.map((v) => Math.round(v).toString(16).padStart(2, '0')).join('')}`;
const mix = (c: Rgb, to: number, t: number): Rgb => c.map((v) => v + (to - v) * t) as Rgb;
const lum = (c: Rgb) => {
  const [r, g, b] = c.map((v) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  }) as Rgb;
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const contrast = (a: Rgb, b: Rgb) => {
  const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p) as [number, number];
  return (x + 0.05) / (y + 0.05);
};
const WHITE: Rgb = [255, 255, 255];
const DARK_BODY: Rgb = [36, 36, 36]; // Mantine's dark-scheme page (dark-7)

/** The colour moved towards `to` (0 black, 255 white) just enough for 4.6:1 against `against`. */
function until(c: Rgb, to: number, against: Rgb): Rgb {
  for (let t = 0; t <= 1; t += 0.04) {
    const m = mix(c, to, t);
    if (contrast(m, against) >= 4.6) return m;
  }
  return mix(c, to, 1);
}

/**
 * The ten shades of the operator's colour, each readable where Mantine puts it (axe, WCAG
 * 1.4.3): shades 5-9 carry white text (buttons; the theme's primary shades are 8 light, 7
 * dark) and are links on the light page, so the operator's colour is darkened as little as
 * needed for 4.6:1 against white; shade 4 is the link colour on the dark page, lightened as
 * needed; 0-3 are tints.
 */
export function brandShades(color: string) {
  const c = parse(color);
  const filled = until(c, 0, WHITE);
  const onDark = until(c, 255, DARK_BODY);
  return colorsTuple([
    hex(mix(onDark, 255, 0.85)),
    hex(mix(onDark, 255, 0.7)),
    hex(mix(onDark, 255, 0.5)),
    hex(mix(onDark, 255, 0.25)),
    hex(onDark),
    hex(filled),
    hex(filled),
    hex(filled),
    hex(filled),
    hex(mix(filled, 0, 0.2)),
  ]);
}

/** The admin panel's theme, with the operator's colour as the primary one when set. */
export function brandTheme(color: string | null | undefined): MantineThemeOverride {
  if (!color || !/^#[0-9a-fA-F]{6}$/.test(color)) return baseTheme;
  return mergeThemeOverrides(baseTheme, createTheme({ colors: { brand: brandShades(color) } }));
}

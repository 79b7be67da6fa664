import type { AdminSchemas } from '@svc/api-client';
import { appsFor, CLIENT_APPS, DEFAULT_APP_ORDER, PLATFORMS, type Platform } from '@svc/client-apps';
import { LOCALES, type LocaleCode } from '@svc/web-ui';

/** The customer pages' form: its values, and how they become the PATCH the API takes. */

export type CustomerPages = AdminSchemas['CustomerPages'];
export type Patch = AdminSchemas['CustomerPagesPatch'];

/** The largest logo the server keeps (decoded bytes), refused here before it is sent. */
export const LOGO_MAX_BYTES = 64 * 1024;
export const LOGO_TYPES = ['image/png', 'image/jpeg', 'image/webp'];
/** The customer pages' own primary colour when the operator chose none (packages/web-ui's brand, shade 8). */
export const DEFAULT_COLOR = '#086f96';
export const LANGS = LOCALES.map((l) => l.code);

export interface Values {
  name: string;
  logo: string | null;
  primary_color: string;
  support_url: string;
  announcement: string;
  /** Per platform the apps offered in order, or null: the default order. */
  apps: Record<Platform, string[] | null>;
  texts: Record<LocaleCode, { welcome: string; announcement: string }>;
}

export function toValues(s: CustomerPages): Values {
  return {
    name: s.name ?? '',
    logo: s.logo,
    primary_color: s.primary_color ?? '',
    support_url: s.support_url ?? '',
    announcement: s.announcement ?? '',
    apps: Object.fromEntries(PLATFORMS.map((p) => [p, s.apps[p] ?? null])) as Values['apps'],
    texts: Object.fromEntries(
      LANGS.map((l) => [l, { welcome: s.texts[l]?.welcome ?? '', announcement: s.texts[l]?.announcement ?? '' }]),
    ) as Values['texts'],
  };
}

const orNull = (v: string) => v.trim() || null;

/** The form as the API takes it: blank is null, a platform on the default order is left out, empty texts dropped. */
export function toBody(v: Values): Required<Patch> {
  const apps: NonNullable<Patch['apps']> = {};
  for (const p of PLATFORMS) if (v.apps[p]) apps[p] = v.apps[p] as string[];
  const texts: NonNullable<Patch['texts']> = {};
  for (const l of LANGS) {
    const welcome = orNull(v.texts[l].welcome);
    const announcement = orNull(v.texts[l].announcement);
    if (welcome || announcement) texts[l] = { ...(welcome ? { welcome } : {}), ...(announcement ? { announcement } : {}) };
  }
  return {
    name: orNull(v.name),
    logo: v.logo,
    primary_color: orNull(v.primary_color),
    support_url: orNull(v.support_url),
    announcement: orNull(v.announcement),
    apps,
    texts,
  };
}

/** Only what changed since the last save (PATCH merges top-level fields). */
export function changes(before: Values, after: Values): Patch {
  const a = toBody(before);
  const b = toBody(after);
  return Object.fromEntries(Object.entries(b).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(a[k as keyof Patch]))) as Patch;
}

/** An app's name by its id (the catalogue's), or the id. */
export const appName = (id: string) => CLIENT_APPS.find((a) => a.id === id)?.name ?? id;

/** The apps offered on `platform` in order: the operator's order, or the default. */
export const enabledApps = (platform: Platform, order: string[] | null): string[] =>
  appsFor(platform, order ?? DEFAULT_APP_ORDER[platform]).map((a) => a.id);

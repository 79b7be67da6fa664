import { type CatalogLoader, changeLocale, type LocaleCode, preferredLocale, setUpI18n } from '@svc/web-ui';
import type { i18n as I18n } from 'i18next';

// Every catalogue is its own chunk, English too (it is not in the first bundle: the panel's
// first-load budget has no room for its strings). English, the fallback of every key, is fetched
// before the first render, at the same time as the reader's own language when that is another.
type Catalogue = Record<string, unknown>;
const loaders: Record<LocaleCode, () => Promise<{ default: Catalogue }>> = {
  en: () => import('./locales/en.json'),
  ru: () => import('./locales/ru.json'),
  fa: () => import('./locales/fa.json'),
  zh: () => import('./locales/zh.json'),
};
const loader: CatalogLoader = async (code) => (await loaders[code]()).default;

let instance: I18n | undefined;
export async function startI18n(): Promise<I18n> {
  const preferred = preferredLocale();
  // Both requests in flight at once; setUpI18n then finds the preferred one already fetched.
  const [en] = await Promise.all([loader('en'), preferred === 'en' ? undefined : loader(preferred)]);
  instance = await setUpI18n(en, loader);
  return instance;
}
/** A string of the current language outside React (notifications). */
export const translate = (key: string): string => instance?.t(key) ?? key;

export const switchLocale = (code: LocaleCode) => (instance ? changeLocale(instance, loader, code) : Promise.resolve());

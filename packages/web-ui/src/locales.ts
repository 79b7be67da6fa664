import i18next, { type i18n as I18n } from 'i18next';
import { initReactI18next } from 'react-i18next';

/** The languages every web app ships from the start, with their writing direction. */
export const LOCALES = [
  { code: 'en', name: 'English', dir: 'ltr' },
  { code: 'ru', name: 'Русский', dir: 'ltr' },
  { code: 'fa', name: 'فارسی', dir: 'rtl' },
  { code: 'zh', name: '简体中文', dir: 'ltr' },
] as const;
export type LocaleCode = (typeof LOCALES)[number]['code'];

const STORAGE_KEY = 'svc.locale';

export const directionOf = (code: string): 'ltr' | 'rtl' => (LOCALES.find((l) => l.code === code)?.dir ?? 'ltr') as 'ltr' | 'rtl';

/** The saved choice, else the first of the browser's languages we have, else English. */
export function preferredLocale(): LocaleCode {
  const saved = safeStorage()?.getItem(STORAGE_KEY);
  const known = (code: string | null | undefined) => LOCALES.find((l) => l.code === code?.toLowerCase().split('-')[0])?.code;
  if (known(saved)) return known(saved) as LocaleCode;
  for (const lang of navigator.languages ?? [navigator.language]) {
    const code = known(lang);
    if (code) return code;
  }
  return 'en';
}

export type CatalogLoader = (code: LocaleCode) => Promise<Record<string, unknown>>;

/**
 * i18next for a web app: English is bundled (the fallback of every missing key); the other
 * catalogues are fetched when chosen (`loader`), so the first load carries one language only.
 * `<html lang dir>` follows the language.
 */
export async function setUpI18n(english: Record<string, unknown>, loader: CatalogLoader): Promise<I18n> {
  const instance = i18next.createInstance();
  await instance.use(initReactI18next).init({
    resources: { en: { translation: english } },
    lng: 'en',
    fallbackLng: 'en',
    interpolation: { escapeValue: false },
    returnNull: false,
  });
  instance.on('languageChanged', (lng) => {
    document.documentElement.lang = lng;
    document.documentElement.dir = directionOf(lng);
  });
  await changeLocale(instance, loader, preferredLocale());
  return instance;
}

export async function changeLocale(instance: I18n, loader: CatalogLoader, code: LocaleCode): Promise<void> {
  if (code !== 'en' && !instance.hasResourceBundle(code, 'translation')) {
    instance.addResourceBundle(code, 'translation', await loader(code));
  }
  safeStorage()?.setItem(STORAGE_KEY, code);
  await instance.changeLanguage(code);
  document.documentElement.lang = code;
  document.documentElement.dir = directionOf(code);
}

function safeStorage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

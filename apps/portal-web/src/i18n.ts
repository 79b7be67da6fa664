import { type CatalogLoader, changeLocale, LOCALES, type LocaleCode, setUpI18n } from '@svc/web-ui';
import type { i18n as I18n } from 'i18next';
import en from './locales/en.json';

type Catalogue = Record<string, unknown>;
type Chunk = () => Promise<{ default: Catalogue }>;

/**
 * Two parts per language. locales/<lang>.json: the frame and the screens before sign-in, English
 * in the first bundle (the fallback of every key), the others fetched when chosen.
 * locales/account/<lang>.json: the screens of a signed-in customer (subscriptions, plans,
 * payments, settings), fetched with the first of them (loadAccountTexts): a visitor who only
 * signs in never downloads them, and the first load stays within its budget.
 */
const loaders: Record<Exclude<LocaleCode, 'en'>, Chunk> = {
  ru: () => import('./locales/ru.json'),
  fa: () => import('./locales/fa.json'),
  zh: () => import('./locales/zh.json'),
};
const accountLoaders: Record<LocaleCode, Chunk> = {
  en: () => import('./locales/account/en.json'),
  ru: () => import('./locales/account/ru.json'),
  fa: () => import('./locales/account/fa.json'),
  zh: () => import('./locales/account/zh.json'),
};

// Once a signed-in screen has been shown, every language loaded afterwards comes with both parts.
let accountWanted = false;
const loader: CatalogLoader = async (code) => {
  const main = code === 'en' ? en : (await loaders[code]()).default;
  return accountWanted ? { ...main, ...(await accountLoaders[code]()).default } : main;
};

let instance: I18n | undefined;
/** i18next in the browser's language (or the one chosen before, kept in localStorage); `<html lang dir>` follow it. */
export async function startI18n(): Promise<I18n> {
  instance = await setUpI18n(en, loader);
  return instance;
}

export const switchLocale = (code: LocaleCode) => (instance ? changeLocale(instance, loader, code) : Promise.resolve());

let accountTexts: Promise<void> | undefined;
/** The signed-in screens' texts, for English (the fallback) and every language loaded so far; once. */
export function loadAccountTexts(): Promise<void> {
  accountTexts ??= (async () => {
    accountWanted = true;
    const i18n = instance;
    if (!i18n) return;
    const loaded = LOCALES.map((l) => l.code).filter((code) => code === 'en' || i18n.hasResourceBundle(code, 'translation'));
    const parts = await Promise.all(loaded.map(async (code) => [code, (await accountLoaders[code]()).default] as const));
    for (const [code, part] of parts) i18n.addResourceBundle(code, 'translation', part, true, false);
  })().catch((err: unknown) => {
    // A failed fetch (the network away) is tried again by the next screen that asks.
    accountTexts = undefined;
    throw err;
  });
  return accountTexts;
}

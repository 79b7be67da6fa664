import { type CatalogLoader, changeLocale, type LocaleCode, setUpI18n } from '@svc/web-ui';
import type { i18n as I18n } from 'i18next';
import en from './locales/en.json';

// English is in the first bundle (the fallback of every key); the others are chunks fetched when chosen.
const loaders: Record<Exclude<LocaleCode, 'en'>, () => Promise<{ default: Record<string, unknown> }>> = {
  ru: () => import('./locales/ru.json'),
  fa: () => import('./locales/fa.json'),
  zh: () => import('./locales/zh.json'),
};
const loader: CatalogLoader = async (code) => (code === 'en' ? en : (await loaders[code]()).default);

let instance: I18n | undefined;
/** i18next in the browser's language (or the one chosen before, kept in localStorage); `<html lang dir>` follow it. */
export async function startI18n(): Promise<I18n> {
  instance = await setUpI18n(en, loader);
  return instance;
}

export const switchLocale = (code: LocaleCode) => (instance ? changeLocale(instance, loader, code) : Promise.resolve());

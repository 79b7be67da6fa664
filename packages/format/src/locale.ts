/** The locale every surface without one of its own uses (the pages' and mails' texts are English). */
export const DEFAULT_LOCALE = 'en';

/**
 * One Intl formatter per locale and options, made once: a page renders a few numbers per
 * request, and building an Intl object costs more than using one. A locale Intl does not know,
 * or a malformed tag (it comes from a page's settings or a browser), formats as the default.
 */
export function cachedIntl<T>(make: (locale: string) => T): (locale: string | undefined) => T {
  const byLocale = new Map<string, T>();
  return (locale) => {
    const tag = locale || DEFAULT_LOCALE;
    let held = byLocale.get(tag);
    if (held === undefined) {
      try {
        held = make(tag);
      } catch {
        held = make(DEFAULT_LOCALE);
      }
      // Bounded: locales come from requests.
      if (byLocale.size >= 64) byLocale.clear();
      byLocale.set(tag, held);
    }
    return held;
  };
}

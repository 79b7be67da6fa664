import { useDirection } from '@mantine/core';
import { directionOf, LOCALES, type LocaleCode } from '@svc/web-ui';
import { useTranslation } from 'react-i18next';
import { switchLocale } from '../i18n.ts';

/**
 * The language, chosen with the browser's own select (a phone shows its native picker), each
 * name in its own language. The choice is remembered (localStorage) and turns the page
 * right-to-left for Persian. A plain <select>, not web-ui's LanguageMenu nor Mantine's
 * NativeSelect: Menu brings Popover and floating-ui (~12 KiB gzipped), NativeSelect the input
 * machinery (~4 KiB), into the first load, which the portal's 150 KiB budget has no room for.
 */
export function LanguagePicker({ id, testId = 'language' }: { id?: string; testId?: string } = {}) {
  const { t, i18n } = useTranslation();
  const { setDirection } = useDirection();
  const current = LOCALES.find((l) => l.code === i18n.language)?.code ?? 'en';
  return (
    <select
      className="svc-language"
      // With an id, a <label for> names it; else its own label.
      {...(id ? { id } : { 'aria-label': t('frame.language') })}
      value={current}
      onChange={(e) => {
        const code = e.currentTarget.value as LocaleCode;
        void switchLocale(code).then(() => setDirection(directionOf(code)));
      }}
      data-testid={testId}
    >
      {LOCALES.map((l) => (
        <option key={l.code} value={l.code} lang={l.code} dir={l.dir}>
          {l.name}
        </option>
      ))}
    </select>
  );
}

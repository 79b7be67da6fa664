import type { TFunction } from 'i18next';

/**
 * The shortest password the portal API takes (the domain's PASSWORD_MIN_LENGTH; a test compares
 * them, apps/portal-web/test/catalogues.test.ts): said before a customer sends one.
 */
export const PASSWORD_MIN = 8;

/** A new password's hint and its form rules (registration, settings): one wording, one minimum. */
export function newPasswordField(t: TFunction) {
  const rule = t('register.passwordRule', { count: PASSWORD_MIN });
  return {
    description: rule,
    rules: { required: t('common.required'), minLength: { value: PASSWORD_MIN, message: rule } },
  };
}

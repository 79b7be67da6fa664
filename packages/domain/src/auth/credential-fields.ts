import { z } from 'zod';

/**
 * The fields every sign-in surface shares (admin API, `svc admin`, the portal): one email
 * rule, one password policy. Use case inputs are built from these.
 */

export const EMAIL_MAX_LENGTH = 254;
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 1024;

/**
 * Emails are compared case-insensitively: stored, and looked up, trimmed and lower-cased.
 * For lookups by a value that need not be a valid address (list filters); inputs use Email.
 */
export const emailKey = (email: string): string => email.trim().toLowerCase();

/**
 * An email address as every surface accepts it (forms, the admin API, OAuth profiles): one
 * ASCII address (letters, digits and `_'+-.` before the `@`, a dotted name after it; an
 * internationalized domain in its xn-- form), trimmed, at most 254 characters, then lower-cased
 * (see emailKey). Checked before lower-casing: Unicode folds some letters onto ASCII (the
 * Kelvin sign U+212A lower-cases to 'k'), so an address checked after folding could land on
 * another customer's. No display names, lists, spaces, quotes or line breaks: a value that
 * reaches a mail header is exactly one address.
 */
export const Email = z
  .string()
  .trim()
  .max(EMAIL_MAX_LENGTH, `must be at most ${EMAIL_MAX_LENGTH} characters`)
  .email('must be an email address')
  .toLowerCase()
  .meta({ example: 'ops@example.com' });

/**
 * A password presented to sign in: anything the hasher can compare. The policy is not applied
 * here, so a stricter policy never locks out someone whose password predates it.
 */
export const Password = z
  .string()
  .min(1, 'must not be empty')
  .max(PASSWORD_MAX_LENGTH, `must be at most ${PASSWORD_MAX_LENGTH} characters`)
  .meta({ format: 'password' });

/** A password being set (setup, admins, reset, clients): the one password policy. */
export const NewPassword = z
  .string()
  .min(PASSWORD_MIN_LENGTH, `must be at least ${PASSWORD_MIN_LENGTH} characters`)
  .max(PASSWORD_MAX_LENGTH, `must be at most ${PASSWORD_MAX_LENGTH} characters`)
  .meta({ format: 'password' });

/** Email and password sign-in, whichever surface (admins here; clients on the portal). */
export const PasswordLoginInput = z.object({ email: Email, password: Password }).strict().brand<'PasswordLoginInput'>();
export type PasswordLoginInput = z.output<typeof PasswordLoginInput>;

import { z } from 'zod';
import { emailKey } from '../admins/admin-view.ts';
import { checkPasswordPolicy, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../auth/password-hasher.ts';
import { normalizedBy } from '../shared/input.ts';

/**
 * A client's email as admins give it: an address (zod's email format, stricter than the
 * shape normalizeEmail accepts) of at most 254 characters, stored trimmed and lower-cased so
 * lookups ignore case.
 */
export const ClientEmail = z.string().trim().max(254).email().transform(emailKey).meta({ example: 'client@example.com' });

/** A client's password, by the one password policy (checkPasswordPolicy). */
export const ClientPassword = z
  .string()
  .transform(
    normalizedBy((password: string) => {
      checkPasswordPolicy(password);
      return password;
    }),
  )
  .meta({ format: 'password', minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH });

/** What an admin may set as a client's status directly: ban (disabled) and unban (active). */
export const AdminClientStatus = z.enum(['active', 'disabled']);

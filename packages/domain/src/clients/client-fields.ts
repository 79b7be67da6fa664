import { z } from 'zod';
import { Email, NewPassword } from '../auth/credential-fields.ts';

/** A client's email: the one email rule (trimmed, lower-cased so lookups ignore case, at most 254 characters). */
export const ClientEmail = Email.meta({ example: 'client@example.com' });

/** A client's password: the one password policy. */
export const ClientPassword = NewPassword;

/** What an admin may set as a client's status directly: ban (disabled) and unban (active). */
export const AdminClientStatus = z.enum(['active', 'disabled']);

import type { ClientStatus } from '@svc/db';
import { ForbiddenError } from '../errors.ts';

/**
 * Spec 3.1 rule 1 / 7.2 "Sign-in by a client that is unverified or not active: Refused". Said
 * only after the client proved who they are (right password, a valid link, the provider), so
 * it tells a stranger nothing: 403 with what to do, and `code` (client-pending, client-rejected,
 * client-disabled, email-unconfirmed) for a front end to translate.
 */
export function clientSignInRefusal(c: { status: ClientStatus; email_verified_at: Date | null }): ForbiddenError {
  const [code, why] =
    c.status === 'pending'
      ? ['client-pending', 'your registration waits for approval by an administrator']
      : c.status === 'rejected'
        ? ['client-rejected', 'this registration was not approved']
        : c.status === 'disabled'
          ? ['client-disabled', 'this account is disabled']
          : ['email-unconfirmed', 'confirm your email first: use the link we sent, or ask for a new one'];
  // `code` beside the words: the portal web app says it in the customer's language.
  return new ForbiddenError(`sign-in refused: ${why}`, { code });
}

import type { ClientStatus } from '@svc/db';
import { ForbiddenError } from '../errors.ts';

/**
 * Spec 3.1 rule 1 / 7.2 "Sign-in by a client that is unverified or not active: Refused". Said
 * only after the client proved who they are (right password, a valid link, the provider), so
 * it tells a stranger nothing: 403 with what to do.
 */
export function clientSignInRefusal(c: { status: ClientStatus; email_verified_at: Date | null }): ForbiddenError {
  const why =
    c.status === 'pending'
      ? 'your registration waits for approval by an administrator'
      : c.status === 'rejected'
        ? 'this registration was not approved'
        : c.status === 'disabled'
          ? 'this account is disabled'
          : 'confirm your email first: use the link we sent, or ask for a new one';
  return new ForbiddenError(`sign-in refused: ${why}`);
}

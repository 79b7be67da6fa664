import { z } from 'zod';
import { recordAudit } from '../audit/record-audit.ts';
import { ClientEmail, ClientPassword } from '../clients/client-fields.ts';
import { registerClient } from '../clients/register-client.ts';
import { isDomainError } from '../errors.ts';
import { anonymous, type DomainDeps } from '../shared/context.ts';
import { randomToken, sha256Hex } from '../shared/secrets.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { issueMagicLink } from './magic-link.ts';
import { assertPasswordRegistrationOpen } from './portal-methods.ts';
import { enforceRateLimit } from './rate-limit.ts';
import type { RequestMeta } from './sessions.ts';

export const RegisterInput = z.object({ email: ClientEmail, password: ClientPassword }).strict().brand<'RegisterInput'>();
export type RegisterInput = z.output<typeof RegisterInput>;

/** The answer, and the value the registering browser keeps (its cookie: registrationBrowserCookie). */
export interface Registered {
  answer: RegistrationAnswer;
  browserKey: string;
}

export interface RegistrationAnswer {
  id: string;
  email: string;
  status: 'pending' | 'active';
  email_verified: false;
  /** What happens next, for the person. */
  next: string;
}

/**
 * POST /portal/v1/auth/register (spec 3.1 rule 2, 5.8): a client with email_verified_at empty
 * (pending in mode application, active in mode open) and a magic link mailed as the
 * confirmation; unconfirmed records are deleted after 24 h (sign-in cleanup). Every attempt is
 * audited, refused ones (409, 429) included.
 *
 * The password is not the client's yet: its hash rides on the confirmation link and becomes the
 * password only when that link confirms the email in the browser that registered (its cookie,
 * registration-browser.ts; confirm-client-email.ts). Whoever registers
 * an address that is not theirs sets nothing the mailbox's owner did not accept, and a sign-in
 * link or a provider that confirms the address instead leaves no password behind.
 */
export async function registerWithPassword(deps: DomainDeps, input: RegisterInput, meta: RequestMeta): Promise<Registered> {
  assertPasswordRegistrationOpen(deps.config);
  const actor = anonymous(meta.ip, meta.userAgent);
  try {
    await enforceRateLimit(deps, 'register', deps.config.rate_limits.register, { ip: meta.ip, subject: `client:${input.email}` });
    const hash = await deps.passwords.hash(input.password);
    return await unitOfWork({ ...deps, actor }, async (uow) => {
      const row = await registerClient(uow, deps, { email: input.email, method: 'password', emailVerified: false });
      const browserKey = randomToken(32);
      await issueMagicLink(uow, deps, row, 'confirm', { passwordHash: hash, browserHash: sha256Hex(browserKey) });
      const status = row.status === 'pending' ? 'pending' : 'active';
      const confirm = 'confirm your email with the link we sent, in this browser (there it also makes your password yours)';
      const answer: RegistrationAnswer = {
        id: row.id,
        email: row.email,
        status,
        email_verified: false,
        next: status === 'pending' ? `${confirm}; an administrator then approves the registration` : `${confirm}; the link signs you in`,
      };
      return { answer, browserKey };
    });
  } catch (err) {
    if (isDomainError(err) && err.type !== 'not-found') {
      await recordAudit(
        { ...deps, actor },
        {
          action: 'client.registration_refused',
          details: { email: input.email, method: 'password', reason: err.type === 'conflict' ? 'email_taken' : err.type },
        },
      );
    }
    throw err;
  }
}

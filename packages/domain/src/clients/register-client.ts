import type { ClientRow } from '@svc/db';
import { ConflictError, NotFoundError } from '../errors.ts';
import { recordEvent } from '../events/record-event.ts';
import type { DomainDeps } from '../shared/context.ts';
import { isUniqueViolation } from '../shared/db-errors.ts';
import { newId } from '../shared/ids.ts';
import type { UnitOfWork } from '../shared/unit-of-work.ts';
import { initialClientStatus } from './client-status.ts';
import { CLIENT_EMAIL_TAKEN } from './client-view.ts';

export interface Registration {
  /** Lower-cased (ClientEmail). */
  email: string;
  /** `password` or `oauth:<provider>`. */
  method: string;
  /** The provider said email_verified (OAuth): the email counts as confirmed at once (spec 3.1). */
  emailVerified: boolean;
}

/**
 * Self-registration on the portal (spec 3.1, 5.8), whatever the method, in the caller's unit:
 * - mode closed: the registration routes do not exist (404);
 * - an email that exists, in any status (rejected included), is 409 (rule 3; an admin unblocks a
 *   new attempt by deleting or approving the record). Two registrations of one email at once:
 *   the unique index decides, the loser gets the same 409;
 * - mode application: status pending; mode open: status active, and sign-in still needs the
 *   email confirmed (rule 1), which a verified OAuth email already is;
 * - either mode: the event client.registered (spec 6) with the mode, so owners are told of
 *   every new customer (docs/notifications.md).
 * - never a password: a password registration's waits on its confirmation link, so whoever
 *   registers an address that is not theirs owns nothing once its owner confirms it another way
 *   (docs/portal.md, "A password only with a confirmed email"); a second registration of an
 *   unconfirmed email is the same 409, so it can neither replace nor add one.
 * The attempt is audited as the anonymous caller's (the unit's actor).
 */
export async function registerClient(uow: UnitOfWork, deps: Pick<DomainDeps, 'config' | 'clock'>, r: Registration): Promise<ClientRow> {
  const mode = deps.config.portal_auth.registration;
  if (mode === 'closed') throw new NotFoundError('route');
  const { status, emailVerified } = initialClientStatus({ by: 'registration', mode });
  const now = deps.clock.now();
  const trx = uow.db;
  const taken = await trx.selectFrom('clients').select(['id', 'status']).where('email', '=', r.email).executeTakeFirst();
  if (taken) throw emailTaken();
  const row = await trx
    .insertInto('clients')
    .values({
      id: newId('cli', now.getTime()),
      email: r.email,
      // Never a password here: a password registration's waits on its confirmation link
      // (client-registration.ts), so an unconfirmed record has none to keep (pre-hijacking).
      password_hash: null,
      email_verified_at: emailVerified || r.emailVerified ? now : null,
      status,
      note: null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
    .catch((err: unknown) => {
      if (isUniqueViolation(err, 'clients_email_key')) throw emailTaken();
      throw err;
    });
  uow.audit({
    action: 'client.registered',
    entity_type: 'client',
    entity_id: row.id,
    details: { email: r.email, status, method: r.method, registration_mode: mode, email_verified: row.email_verified_at !== null },
  });
  // Owners hear of every registration (mailed by default), not only of those waiting for them.
  await recordEvent(
    uow,
    {
      type: 'client.registered',
      payload: {
        client_id: row.id,
        email: r.email,
        status: status === 'pending' ? 'pending' : 'active',
        method: r.method,
        registration_mode: mode,
      },
    },
    now,
  );
  return row;
}

const emailTaken = () => new ConflictError('a client with this email exists', CLIENT_EMAIL_TAKEN);

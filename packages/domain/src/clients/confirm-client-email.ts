import { revokeAllSessions } from '../auth/sessions.ts';
import type { UnitOfWork } from '../shared/unit-of-work.ts';

export interface EmailConfirmation {
  /** What proved the mailbox: `magic_link`, or `oauth:<provider>` for a profile the provider says is verified. */
  method: string;
  /**
   * Only when the link redeemed is a password registration's own confirmation link: the hash
   * chosen at that registration (kept on the link, never on the client before now).
   */
  registrationPasswordHash?: string | null | undefined;
}

/**
 * Marks a client's email confirmed (spec 3.1: a magic link's first use, or a provider that
 * vouches for the address), in the caller's unit. The one place that does, because it carries
 * the rule against account pre-hijacking (docs/portal.md, "A password only with a confirmed
 * email"): a password set before the email was confirmed is never kept. The client's password
 * becomes the registration's own (when the registration's confirmation link is what confirms)
 * or none; any other password on the record goes, with every session, and the registration
 * passwords other links carry are dropped, so a registration link used later sets nothing.
 * An email confirmed already stays as it is. Answers when the email was confirmed.
 */
export async function confirmClientEmail(uow: UnitOfWork, clientId: string, now: Date, how: EmailConfirmation): Promise<Date> {
  const trx = uow.db;
  const row = await trx
    .selectFrom('clients')
    .select(['email_verified_at', 'password_hash'])
    .where('id', '=', clientId)
    .forUpdate()
    .executeTakeFirstOrThrow();
  if (row.email_verified_at) return row.email_verified_at;
  const password = how.registrationPasswordHash ?? null;
  await trx
    .updateTable('clients')
    .set({ email_verified_at: now, password_hash: password, updated_at: now })
    .where('id', '=', clientId)
    .execute();
  await trx
    .updateTable('magic_link_tokens')
    .set({ password_hash: null })
    .where('client_id', '=', clientId)
    .where('password_hash', 'is not', null)
    .execute();
  // Nobody signs in unconfirmed (rule 1), so there should be none: ending them costs nothing and
  // keeps the rule whole whatever wrote the dropped password.
  const dropped = row.password_hash !== null;
  const revoked = dropped ? await revokeAllSessions(trx, { type: 'client', id: clientId }, 'email_confirmed', now) : 0;
  uow.audit({
    action: 'client.email_confirmed',
    entity_type: 'client',
    entity_id: clientId,
    details: {
      method: how.method,
      password: password ? 'set_from_registration' : dropped ? 'cleared' : 'none',
      ...(revoked > 0 ? { sessions_revoked: revoked } : {}),
    },
  });
  return now;
}

import { sql } from 'kysely';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';

/** Spec 3.1 rule 2 / spec 8: unconfirmed password registrations are deleted after 24 hours. */
export const UNCONFIRMED_REGISTRATION_TTL_MS = 24 * 3600_000;
/** Used and expired magic-link tokens and OAuth requests are kept a day for the audit trail's sake, then removed. */
const SPENT_KEPT_MS = 24 * 3600_000;
const BATCH = 500;

/**
 * The worker's `sign-in.cleanup` (scheduled): removes self-registrations whose email was never
 * confirmed 24 h after they were made (only those: an admin-created client is verified at
 * creation, and a client with a subscription is kept whatever its state), and expired
 * magic-link tokens and OAuth requests. Idempotent; each deleted registration is audited.
 */
export async function cleanUpSignIn(ctx: DomainContext): Promise<{ registrations: number; magic_links: number; oauth_requests: number }> {
  const now = ctx.clock.now();
  const cutoff = new Date(now.getTime() - UNCONFIRMED_REGISTRATION_TTL_MS);
  const registrations = await unitOfWork(ctx, async (uow) => {
    const gone = await uow.db
      .deleteFrom('clients')
      .where(
        'id',
        'in',
        uow.db
          .selectFrom('clients as c')
          .select('c.id')
          .where('c.email_verified_at', 'is', null)
          .where('c.created_at', '<=', cutoff)
          .where('c.status', 'in', ['pending', 'active'])
          .where(({ not, exists, selectFrom }) =>
            not(exists(selectFrom('subscriptions as s').select(sql`1`.as('x')).whereRef('s.client_id', '=', 'c.id'))),
          )
          .orderBy('c.id')
          .limit(BATCH),
      )
      .returning(['id', 'email'])
      .execute();
    for (const c of gone)
      uow.audit({ action: 'client.unconfirmed_deleted', entity_type: 'client', entity_id: c.id, details: { email: c.email } });
    return gone.length;
  });
  const spent = new Date(now.getTime() - SPENT_KEPT_MS);
  const links = await ctx.db.deleteFrom('magic_link_tokens').where('expires_at', '<=', spent).executeTakeFirst();
  const requests = await ctx.db.deleteFrom('oauth_requests').where('expires_at', '<=', spent).executeTakeFirst();
  return { registrations, magic_links: Number(links.numDeletedRows), oauth_requests: Number(requests.numDeletedRows) };
}

import type { Db } from '@svc/db';
import { z } from 'zod';
import { assertPortalPasswordEnabled } from '../auth/portal-methods.ts';
import { ClientPassword } from '../clients/client-fields.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { portalClient } from './portal-client.ts';
import type { PortalCtx } from './portal-subscriptions.ts';

export const SetPasswordInput = z.object({ password: ClientPassword }).strict().brand<'SetPasswordInput'>();
export type SetPasswordInput = z.output<typeof SetPasswordInput>;

/**
 * PUT /portal/v1/me/password: set or change the signed-in client's password. This is access
 * recovery (spec 5.7): sign in by magic link, then set a new password here; no old password is
 * asked (the link proved the mailbox). Every other session of the client is revoked (whoever
 * knew the old password is signed out); the current one stays. 404 when portal password
 * sign-in is off (the method does not exist).
 */
export async function setClientPassword(ctx: PortalCtx, sid: string, input: SetPasswordInput): Promise<void> {
  assertPortalPasswordEnabled(ctx.config);
  await portalClient(ctx, ctx.actor.id);
  const hash = await ctx.passwords.hash(input.password);
  await unitOfWork(ctx, async (uow) => {
    const now = ctx.clock.now();
    await uow.db.updateTable('clients').set({ password_hash: hash, updated_at: now }).where('id', '=', ctx.actor.id).execute();
    const revoked = await revokeOtherSessions(uow.db, ctx.actor.id, sid, now);
    uow.audit({
      action: 'client.password_set',
      entity_type: 'client',
      entity_id: ctx.actor.id,
      details: { other_sessions_revoked: revoked },
    });
  });
}

async function revokeOtherSessions(trx: Db, clientId: string, keep: string, now: Date): Promise<number> {
  const res = await trx
    .updateTable('sessions')
    .set({ revoked_at: now, revoked_reason: 'password_changed' })
    .where('subject_type', '=', 'client')
    .where('subject_id', '=', clientId)
    .where('id', '!=', keep)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

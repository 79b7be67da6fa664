import type { Db } from '@svc/db';
import { z } from 'zod';
import { recordAudit } from '../audit/record-audit.ts';
import { checkClientPassword } from '../auth/client-password-check.ts';
import { Password } from '../auth/credential-fields.ts';
import { assertPortalPasswordEnabled } from '../auth/portal-methods.ts';
import { ClientPassword } from '../clients/client-fields.ts';
import { DomainError } from '../errors.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { portalClient } from './portal-client.ts';
import type { PortalCtx } from './portal-subscriptions.ts';

/** How long after a magic-link or OAuth sign-in a password may be set without the current one. */
export const PASSWORD_CHANGE_WINDOW_MS = 10 * 60_000;

export const SetPasswordInput = z
  .object({
    password: ClientPassword,
    current_password: Password.optional().meta({
      description:
        'your current password; not needed within 10 minutes of signing in by magic link or OAuth (how a forgotten password is replaced)',
    }),
  })
  .strict()
  .brand<'SetPasswordInput'>();
export type SetPasswordInput = z.output<typeof SetPasswordInput>;

/**
 * PUT /portal/v1/me/password: set or change the signed-in client's password. An access token
 * alone is not enough (a stolen one lasts 15 minutes; a password it set would last for good):
 * - a client with a password gives it as `current_password`, checked with the sign-in's budgets
 *   (checkClientPassword), so this is no way around them; a wrong one is a 403 problem naming
 *   the field, and counts;
 * - or, whether or not a password is set, the session was made by a magic link or OAuth less
 *   than PASSWORD_CHANGE_WINDOW_MS ago: access recovery (spec 5.7), where the link proved the
 *   mailbox just now. Refreshing a session does not make it fresh;
 * - otherwise a 403 problem saying both ways.
 * Every other session of the client is revoked (whoever knew the old password is signed out);
 * the current one stays. 404 when portal password sign-in is off (the method does not exist).
 */
export async function setClientPassword(ctx: PortalCtx, sid: string, input: SetPasswordInput): Promise<void> {
  assertPortalPasswordEnabled(ctx.config);
  const client = await portalClient(ctx, ctx.actor.id);
  const hasPassword = client.password_hash !== null;
  let proof: 'current_password' | 'fresh_sign_in';
  if (hasPassword && input.current_password !== undefined) {
    const { ok } = await checkClientPassword(ctx, client.email, input.current_password, ctx.actor.ip);
    if (!ok) return refuse(ctx, 'current_password_wrong', hasPassword);
    proof = 'current_password';
  } else if (await freshSignIn(ctx, sid)) {
    proof = 'fresh_sign_in';
  } else {
    return refuse(ctx, 'current_password_required', hasPassword);
  }
  const hash = await ctx.passwords.hash(input.password);
  await unitOfWork(ctx, async (uow) => {
    const now = ctx.clock.now();
    await uow.db.updateTable('clients').set({ password_hash: hash, updated_at: now }).where('id', '=', ctx.actor.id).execute();
    const revoked = await revokeOtherSessions(uow.db, ctx.actor.id, sid, now);
    uow.audit({
      action: 'client.password_set',
      entity_type: 'client',
      entity_id: ctx.actor.id,
      details: { other_sessions_revoked: revoked, proof },
    });
  });
}

/** The session was made by a magic link or OAuth within the window (its creation, not its last refresh). */
async function freshSignIn(ctx: PortalCtx, sid: string): Promise<boolean> {
  const s = await ctx.db
    .selectFrom('sessions')
    .select(['method', 'created_at'])
    .where('id', '=', sid)
    .where('subject_type', '=', 'client')
    .where('subject_id', '=', ctx.actor.id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (!s || !(s.method === 'magic_link' || s.method.startsWith('oauth:'))) return false;
  return ctx.clock.now().getTime() - s.created_at.getTime() < PASSWORD_CHANGE_WINDOW_MS;
}

const MINUTES = PASSWORD_CHANGE_WINDOW_MS / 60_000;

async function refuse(
  ctx: PortalCtx,
  reason: 'current_password_wrong' | 'current_password_required',
  hasPassword: boolean,
): Promise<never> {
  await recordAudit(ctx, { action: 'client.password_change_refused', entity_type: 'client', entity_id: ctx.actor.id, details: { reason } });
  const again = `sign in by magic link and set it within ${MINUTES} minutes`;
  const [detail, field] =
    reason === 'current_password_wrong'
      ? ['the current password is wrong', 'not your current password']
      : hasPassword
        ? [
            `give your current password, or ${again}`,
            `required, unless you signed in by magic link or OAuth less than ${MINUTES} minutes ago`,
          ]
        : [`to set a password, ${again}`, `you have none: sign in by magic link or OAuth again, then set one within ${MINUTES} minutes`];
  throw new DomainError('forbidden', detail, { current_password: field }, { reason });
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

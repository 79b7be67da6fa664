import { z } from 'zod';
import { revokeAllSessions } from '../auth/sessions.ts';
import { ConflictError } from '../errors.ts';
import { AdminNote } from '../shared/admin-note.ts';
import type { DomainContext } from '../shared/context.ts';
import { isUniqueViolation } from '../shared/db-errors.ts';
import { isEmptyPatch } from '../shared/input.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { afterClientStatusChange, lockClient } from './change-client-status.ts';
import { AdminClientStatus, ClientEmail, ClientPassword } from './client-fields.ts';
import { adminStatusEvent } from './client-status.ts';
import { CLIENT_EMAIL_TAKEN, type ClientView, clientView } from './client-view.ts';
import { getClient } from './read-clients.ts';

/** PATCH /clients/{id}: a merge; absent fields stay as they are. */
export const UpdateClientInput = z
  .object({
    status: AdminClientStatus.optional().meta({
      description: 'ban (active -> disabled) or unban (disabled -> active); pending clients are approved or rejected',
    }),
    email: ClientEmail.optional().meta({ description: 'the new address counts as verified (the admin vouches)' }),
    password: ClientPassword.nullable()
      .optional()
      .meta({ description: "null removes password sign-in; any change ends the client's sessions" }),
    note: AdminNote.optional(),
  })
  .strict()
  .brand<'UpdateClientInput'>();
export type UpdateClientInput = z.output<typeof UpdateClientInput>;

/**
 * PATCH merge. A new email set by the admin counts as verified (the admin vouches, as at
 * creation). A password change or removal ends the client's sessions; so does a ban.
 */
export async function updateClient(ctx: DomainContext, id: string, input: UpdateClientInput): Promise<ClientView> {
  if (isEmptyPatch(input)) return getClient(ctx, id);
  const { email } = input;
  const hash = typeof input.password === 'string' ? await ctx.passwords.hash(input.password) : input.password;
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    uow.subscriptionLinksChanged();
    const current = await lockClient(trx, id);
    const event = input.status !== undefined ? adminStatusEvent(current.status, input.status) : null;
    const emailChanged = email !== undefined && email !== current.email;
    if (emailChanged) {
      const taken = await trx.selectFrom('clients').select('id').where('email', '=', email).executeTakeFirst();
      if (taken) throw new ConflictError('a client with this email exists', CLIENT_EMAIL_TAKEN);
    }
    const now = ctx.clock.now();
    const to = input.status ?? current.status;
    const row = await trx
      .updateTable('clients')
      .set({
        ...(emailChanged ? { email, email_verified_at: now } : {}),
        ...(hash !== undefined ? { password_hash: hash } : {}),
        ...(input.note !== undefined ? { note: input.note } : {}),
        status: to,
        updated_at: now,
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch((err: unknown) => {
        if (isUniqueViolation(err, 'clients_email_key')) throw new ConflictError('a client with this email exists', CLIENT_EMAIL_TAKEN);
        throw err;
      });
    if (hash !== undefined) await revokeAllSessions(trx, { type: 'client', id }, 'password_changed', now);
    const bumped = await afterClientStatusChange(uow, id, current.status, to, now);
    const changed = Object.keys(input).filter((k) => input[k as keyof UpdateClientInput] !== undefined);
    uow.audit({
      action: 'client.updated',
      entity_type: 'client',
      entity_id: id,
      details: {
        changed,
        ...(event ? { status: { from: current.status, to }, event } : {}),
        ...(emailChanged ? { email: { from: current.email, to: email } } : {}),
        ...(bumped.length ? { nodes_bumped: bumped } : {}),
      },
    });
    return clientView(row);
  });
}

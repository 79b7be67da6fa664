import { sql } from 'kysely';
import { z } from 'zod';
import { adminAccessChanged } from '../auth/admin-access.ts';
import { Email, NewPassword } from '../auth/credential-fields.ts';
import { revokeAllSessions } from '../auth/sessions.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { recordEvent } from '../events/record-event.ts';
import type { DomainContext } from '../shared/context.ts';
import { isUniqueViolation } from '../shared/db-errors.ts';
import { isEmptyPatch } from '../shared/input.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { assertActorIsOwner } from './actor-guard.ts';
import { AdminRole } from './admin-fields.ts';
import { type AdminView, adminView } from './admin-view.ts';
import { assertNotLastOwner } from './owner-guard.ts';
import { getAdmin } from './read-admins.ts';

/** PATCH /admins/{id}: a merge; absent fields stay as they are. */
export const UpdateAdminInput = z
  .object({
    email: Email.optional(),
    password: NewPassword.nullable()
      .optional()
      .meta({ description: "null removes password sign-in; any change ends the admin's sessions" }),
    role: AdminRole.optional(),
  })
  .strict()
  .brand<'UpdateAdminInput'>();
export type UpdateAdminInput = z.output<typeof UpdateAdminInput>;

/**
 * PATCH merge. A new password or a removed one ends every session of that admin and the
 * access tokens signed before (token generation); a new role applies to the next request of
 * the admin's existing tokens.
 */
export async function updateAdmin(ctx: DomainContext, id: string, input: UpdateAdminInput): Promise<AdminView> {
  if (isEmptyPatch(input)) {
    await assertActorIsOwner(ctx.db, ctx.actor);
    return getAdmin(ctx, id);
  }
  const { email } = input;
  const hash = typeof input.password === 'string' ? await ctx.passwords.hash(input.password) : input.password;
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    await assertActorIsOwner(trx, ctx.actor);
    const current = await trx.selectFrom('admins').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!current) throw new NotFoundError('admin', id);
    if (input.role !== undefined && input.role !== 'owner' && current.role === 'owner') await assertNotLastOwner(trx, id, 'demote');
    if (email !== undefined && email !== current.email) {
      const taken = await trx.selectFrom('admins').select('id').where('email', '=', email).executeTakeFirst();
      if (taken) throw new ConflictError('an admin with this email exists', { email: 'already taken' });
    }
    const now = ctx.clock.now();
    const row = await trx
      .updateTable('admins')
      .set({
        ...(email !== undefined ? { email } : {}),
        ...(input.role !== undefined ? { role: input.role } : {}),
        // A new or removed password ends the access tokens signed before it (issue 12.7).
        ...(hash !== undefined ? { password_hash: hash, token_generation: sql<number>`token_generation + 1` } : {}),
        updated_at: now,
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch((err: unknown) => {
        if (isUniqueViolation(err, 'admins_email_key'))
          throw new ConflictError('an admin with this email exists', { email: 'already taken' });
        throw err;
      });
    if (hash !== undefined) await revokeAllSessions(trx, { type: 'admin', id }, 'password_changed', now);
    if (hash !== undefined || (input.role !== undefined && input.role !== current.role)) adminAccessChanged(uow, ctx, id);
    if (row.role !== current.role)
      await recordEvent(
        uow,
        { type: 'admin.role_changed', payload: { admin_id: id, email: row.email, role: row.role, previous_role: current.role } },
        now,
      );
    const changed = Object.keys(input).filter((k) => input[k as keyof UpdateAdminInput] !== undefined);
    uow.audit({
      action: 'admin.updated',
      entity_type: 'admin',
      entity_id: id,
      details: { changed, ...(input.role !== undefined ? { role: { from: current.role, to: input.role } } : {}) },
    });
    return adminView(row);
  });
}

import type { AdminRole as AdminRoleName, AdminRow, Db } from '@svc/db';
import { z } from 'zod';
import { Email, NewPassword } from '../auth/credential-fields.ts';
import { ConflictError } from '../errors.ts';
import { recordEvent } from '../events/record-event.ts';
import { logSetupCompleted } from '../installation/bootstrap.ts';
import type { DomainContext } from '../shared/context.ts';
import { isUniqueViolation } from '../shared/db-errors.ts';
import { newId } from '../shared/ids.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { assertActorIsOwner } from './actor-guard.ts';
import { AdminRole } from './admin-fields.ts';
import { type AdminView, adminView } from './admin-view.ts';

/** POST /admins and `svc admin create`: the same rules, so the shell cannot make an admin the API would refuse. */
export const CreateAdminInput = z
  .object({
    email: Email,
    password: NewPassword.optional().meta({ description: 'omit for an admin who signs in only through OAuth' }),
    role: AdminRole,
  })
  .strict()
  .brand<'CreateAdminInput'>();
export type CreateAdminInput = z.output<typeof CreateAdminInput>;

/** Inserts the row inside `trx`; the password is hashed by the caller, outside the transaction. */
export async function insertAdmin(
  trx: Db,
  ctx: DomainContext,
  email: string,
  passwordHash: string | null,
  role: AdminRoleName,
): Promise<AdminRow> {
  const taken = await trx.selectFrom('admins').select('id').where('email', '=', email).executeTakeFirst();
  if (taken) throw new ConflictError('an admin with this email exists', { email: 'already taken' });
  const now = ctx.clock.now();
  return trx
    .insertInto('admins')
    .values({
      id: newId('adm', now.getTime()),
      email,
      password_hash: passwordHash,
      role,
      created_at: now,
      updated_at: now,
      last_login_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
    .catch((err: unknown) => {
      // Lost a race with another create of the same email (API or shell).
      if (isUniqueViolation(err, 'admins_email_key'))
        throw new ConflictError('an admin with this email exists', { email: 'already taken' });
      throw err;
    });
}

export async function createAdmin(ctx: DomainContext, input: CreateAdminInput): Promise<AdminView> {
  const { email } = input;
  const hash = input.password !== undefined ? await ctx.passwords.hash(input.password) : null;
  const created = await unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    await assertActorIsOwner(trx, ctx.actor);
    // Only the shell makes the first admin (the API needs an owner to ask): that ends the setup.
    const first = !(await trx.selectFrom('admins').select('id').limit(1).executeTakeFirst());
    const row = await insertAdmin(trx, ctx, email, hash, input.role);
    uow.audit({ action: 'admin.created', entity_type: 'admin', entity_id: row.id, details: { email, role: row.role } });
    await recordEvent(uow, { type: 'admin.created', payload: { admin_id: row.id, email: row.email, role: row.role } }, ctx.clock.now());
    return { admin: adminView(row), first };
  });
  if (created.first) logSetupCompleted(ctx, created.admin, { surface: 'cli' });
  return created.admin;
}

import { sql } from 'kysely';
import { z } from 'zod';
import { adminAccessChanged } from '../auth/admin-access.ts';
import { Email, NewPassword } from '../auth/credential-fields.ts';
import { revokeAllSessions } from '../auth/sessions.ts';
import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { type AdminView, adminView } from './admin-view.ts';

/** `svc admin reset-password`: whose password, and the new one (the policy of every password set). */
export const ResetAdminPasswordInput = z.object({ email: Email, password: NewPassword }).strict().brand<'ResetAdminPasswordInput'>();
export type ResetAdminPasswordInput = z.output<typeof ResetAdminPasswordInput>;

/**
 * Recovery from the server's shell (`svc admin reset-password`): new password, every session
 * ended, and the access tokens signed before refused from the next request (token generation).
 */
export async function resetAdminPassword(ctx: DomainContext, input: ResetAdminPasswordInput): Promise<AdminView> {
  const { email } = input;
  const hash = await ctx.passwords.hash(input.password);
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const now = ctx.clock.now();
    const row = await trx
      .updateTable('admins')
      .set({ password_hash: hash, token_generation: sql<number>`token_generation + 1`, updated_at: now })
      .where('email', '=', email)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new NotFoundError('admin', email);
    await revokeAllSessions(trx, { type: 'admin', id: row.id }, 'password_reset', now);
    adminAccessChanged(uow, ctx, row.id);
    uow.audit({ action: 'admin.password_reset', entity_type: 'admin', entity_id: row.id });
    return adminView(row);
  });
}

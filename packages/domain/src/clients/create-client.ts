import { checkPasswordPolicy, normalizeEmail } from '../auth/credential-fields.ts';
import { ConflictError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { isUniqueViolation } from '../shared/db-errors.ts';
import { newId } from '../shared/ids.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { initialClientStatus } from './client-status.ts';
import { CLIENT_EMAIL_TAKEN, type ClientView, clientView } from './client-view.ts';

export interface CreateClientInput {
  email: string;
  password?: string | null | undefined;
  note?: string | null | undefined;
}

/** Admin creates a client: active, email verified (the admin vouches, spec 3.1). */
export async function createClient(ctx: DomainContext, input: CreateClientInput): Promise<ClientView> {
  const email = normalizeEmail(input.email);
  if (input.password != null) checkPasswordPolicy(input.password);
  const hash = input.password != null ? await ctx.passwords.hash(input.password) : null;
  const { status, emailVerified } = initialClientStatus({ by: 'admin' });
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const taken = await trx.selectFrom('clients').select('id').where('email', '=', email).executeTakeFirst();
    if (taken) throw new ConflictError('a client with this email exists', CLIENT_EMAIL_TAKEN);
    const now = ctx.clock.now();
    const row = await trx
      .insertInto('clients')
      .values({
        id: newId('cli', now.getTime()),
        email,
        password_hash: hash,
        email_verified_at: emailVerified ? now : null,
        status,
        note: input.note ?? null,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch((err: unknown) => {
        if (isUniqueViolation(err, 'clients_email_key')) throw new ConflictError('a client with this email exists', CLIENT_EMAIL_TAKEN);
        throw err;
      });
    uow.audit({ action: 'client.created', entity_type: 'client', entity_id: row.id, details: { email, status } });
    return clientView(row);
  });
}

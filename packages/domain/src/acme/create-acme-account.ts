import { z } from 'zod';
import { Email } from '../auth/credential-fields.ts';
import { ConflictError, ValidationError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { isUniqueViolation } from '../shared/db-errors.ts';
import { newId } from '../shared/ids.ts';
import { normalizedBy } from '../shared/input.ts';
import { JOBS } from '../shared/jobs.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { type AcmeAccountView, acmeAccountView } from './acme-account-view.ts';

export const LETS_ENCRYPT_PRODUCTION = 'https://acme-v02.api.letsencrypt.org/directory';

/** An https URL without credentials or fragment; returned as the URL parser spells it. */
export function normalizeDirectoryUrl(raw: string, field = 'directory_url'): string {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new ValidationError('invalid directory URL', { [field]: 'must be an https URL' });
  }
  if (u.protocol !== 'https:') throw new ValidationError('invalid directory URL', { [field]: 'must be an https URL' });
  if (u.username || u.password) throw new ValidationError('invalid directory URL', { [field]: 'must not carry credentials' });
  if (u.hash) throw new ValidationError('invalid directory URL', { [field]: 'must not have a fragment' });
  return u.toString();
}

/** POST /acme-accounts: there is no update (spec 4.4), an account is replaced by a new one. */
export const CreateAcmeAccountInput = z
  .object({
    email: Email,
    directory_url: z
      .string()
      .max(2048)
      .transform(normalizedBy((url: string) => normalizeDirectoryUrl(url)))
      .default(LETS_ENCRYPT_PRODUCTION)
      .meta({ format: 'uri', description: `ACME directory; default Let's Encrypt production (${LETS_ENCRYPT_PRODUCTION})` }),
    external_account_binding: z
      .object({
        kid: z
          .string()
          .min(1)
          .max(256)
          .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII'),
        hmac_key: z
          .string()
          .min(16)
          .max(512)
          .regex(/^[A-Za-z0-9_\-+/]+={0,2}$/, 'must be base64 or base64url'),
      })
      .strict()
      .optional()
      .meta({ description: 'External Account Binding (ZeroSSL, some private CAs): write-only, used once by the registration' }),
  })
  .strict()
  .brand<'CreateAcmeAccountInput'>();
export type CreateAcmeAccountInput = z.output<typeof CreateAcmeAccountInput>;

const taken = () =>
  new ConflictError('an ACME account with this email exists for this directory', {
    email: 'already has an account at this directory_url',
  });

/** Records the account; the worker registers it with the CA (registerAcmeAccount). Agreeing to the CA's terms is implied. */
export async function createAcmeAccount(ctx: DomainContext, input: CreateAcmeAccountInput): Promise<AcmeAccountView> {
  const { email, directory_url: directoryUrl } = input;
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const existing = await trx
      .selectFrom('acme_accounts')
      .select('id')
      .where('email', '=', email)
      .where('directory_url', '=', directoryUrl)
      .executeTakeFirst();
    if (existing) throw taken();
    const now = ctx.clock.now();
    const row = await trx
      .insertInto('acme_accounts')
      .values({
        id: newId('acm', now.getTime()),
        email,
        directory_url: directoryUrl,
        account_key_enc: null,
        account_url: null,
        eab_enc: input.external_account_binding ? ctx.secrets.seal(JSON.stringify(input.external_account_binding)) : null,
        registration_error: null,
        registered_at: null,
        created_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch((err: unknown) => {
        // Lost a race with a concurrent create of the same pair.
        if (isUniqueViolation(err, 'acme_accounts_email_directory')) throw taken();
        throw err;
      });
    uow.audit({
      action: 'acme_account.created',
      entity_type: 'acme_account',
      entity_id: row.id,
      details: { email, directory_url: directoryUrl, external_account_binding: input.external_account_binding !== undefined },
    });
    // Registered with the CA by the worker, after commit (a CA that is slow or down holds up nothing).
    uow.enqueue(JOBS.acmeRegisterAccount, { id: row.id });
    return acmeAccountView(row);
  });
}

import { isDomainError, NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { type AcmeAccountView, acmeAccountView } from './acme-account-view.ts';
import { caSays } from './acme-port.ts';

/** One registration attempt (directory, nonce, account) gives up after this long and frees its slot. */
export const ACME_REGISTRATION_DEADLINE_MS = 120_000;

export interface RegisterOptions {
  /** Default ACME_REGISTRATION_DEADLINE_MS. */
  deadlineMs?: number | undefined;
  /** The deadline the error states, when deadlineMs is what is left of a longer job's. */
  statedDeadlineMs?: number | undefined;
  /** Per request to the CA; default the ACME client's (30 s). */
  requestTimeoutMs?: number | undefined;
}

/**
 * Registers a stored ACME account with its CA (the worker's `acme.register-account` job; spec
 * 4.4 acme-accounts). The key is made and sealed before the first attempt and kept, so a retry
 * (after a crash, a CA that was down) asks for the same account: a CA that knows the key
 * answers it (`onlyReturnExisting`). External Account Binding (ZeroSSL, a private CA) is used
 * once and then dropped. Every request goes through the outbound client (@svc/providers acme-protocol.ts) and
 * the attempt gives up at its deadline. The CA's refusal, the rule that refused the directory,
 * "not reachable" or the deadline is kept as registration_error (shown to owners and admins) and
 * thrown, so the job is retried; an account already registered is left as it is.
 */
export async function registerAcmeAccount(ctx: DomainContext, id: string, opts: RegisterOptions = {}): Promise<AcmeAccountView> {
  let row = await ctx.db.selectFrom('acme_accounts').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('ACME account', id);
  if (row.account_url !== null) return acmeAccountView(row);
  if (row.account_key_enc === null) {
    const sealed = ctx.secrets.seal(await ctx.vendors.acme.newAccountKeyPem());
    await ctx.db
      .updateTable('acme_accounts')
      .set({ account_key_enc: sealed })
      .where('id', '=', id)
      .where('account_key_enc', 'is', null)
      .execute();
    row = await ctx.db.selectFrom('acme_accounts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  }
  const eab = row.eab_enc ? (JSON.parse(ctx.secrets.open(row.eab_enc)) as { kid: string; hmac_key: string }) : undefined;
  const contact = [`mailto:${row.email}`];
  let accountUrl: string;
  try {
    accountUrl = await ctx.vendors.acme.session(
      {
        outbound: ctx.outbound,
        directoryUrl: row.directory_url,
        accountKeyPem: ctx.secrets.open(row.account_key_enc as string),
        eab,
        extraCaFile: ctx.config.acme.extra_ca_file,
        deadlineMs: opts.deadlineMs ?? ACME_REGISTRATION_DEADLINE_MS,
        statedDeadlineMs: opts.statedDeadlineMs,
        requestTimeoutMs: opts.requestTimeoutMs,
      },
      async (client) => {
        try {
          await client.createAccount({ termsOfServiceAgreed: true, contact });
        } catch (first) {
          // A retry after the CA took the key: ask for the existing account instead.
          try {
            await client.createAccount({ onlyReturnExisting: true });
          } catch {
            throw first;
          }
        }
        return client.getAccountUrl();
      },
    );
  } catch (err) {
    const why = isDomainError(err) ? err.message : `the CA refused the account: ${caSays(err)}`;
    await ctx.db
      .updateTable('acme_accounts')
      .set({ registration_error: why })
      .where('id', '=', id)
      .where('account_url', 'is', null)
      .execute();
    ctx.log.warn({ acme_account_id: id, directory_url: row.directory_url, error: why }, 'ACME account not registered; retried');
    throw err;
  }
  return unitOfWork(ctx, async (uow) => {
    const now = ctx.clock.now();
    const done = await uow.db
      .updateTable('acme_accounts')
      .set({ account_url: accountUrl, registered_at: now, registration_error: null, eab_enc: null })
      .where('id', '=', id)
      .where('account_url', 'is', null)
      .returningAll()
      .executeTakeFirst();
    if (done)
      uow.audit({
        action: 'acme_account.registered',
        entity_type: 'acme_account',
        entity_id: id,
        details: { directory_url: done.directory_url, account_url: accountUrl, external_account_binding: eab !== undefined },
      });
    return acmeAccountView(done ?? (await uow.db.selectFrom('acme_accounts').selectAll().where('id', '=', id).executeTakeFirstOrThrow()));
  });
}

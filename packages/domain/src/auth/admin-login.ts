import type { Db } from '@svc/db';
import { sql } from 'kysely';
import { recordAudit } from '../audit/record-audit.ts';
import { UnauthenticatedError } from '../errors.ts';
import { anonymous, type DomainDeps } from '../shared/context.ts';
import { sha256Hex } from '../shared/secrets.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import type { PasswordLoginInput } from './credential-fields.ts';
import { assertAdminMethodEnabled } from './methods.ts';
import { addressKey, enforceRateLimit, spendBudget } from './rate-limit.ts';
import { issueSession, type RequestMeta, type TokenPair } from './sessions.ts';

const FAILED = 'invalid email or password';

/** Addresses remembered per admin (the most recent successes); older ones are forgotten. */
export const KNOWN_ADDRESSES_PER_ADMIN = 10;
/** A remembered address stops counting as known after this long without a successful sign-in. */
export const KNOWN_ADDRESS_DAYS = 90;

/** How an address is stored in admin_known_addresses: its rate-limit key (IPv6 by /64), hashed. */
const knownAddressHash = (key: string) => sha256Hex(`admin-known-address:${key}`);

/**
 * Admin password sign-in. Unknown email, no password and wrong password look the same from
 * outside (same message, same Argon2 work); each failure is audited.
 *
 * Budgets (docs/architecture.md, "Sign-in budgets"), so that nobody can lock the owner out:
 * 1. per address, whatever the account (`per_ip`): spent first, before any work; refusing it
 *    says nothing about any account;
 * 2. the password is checked, always, with the same Argon2 work;
 * 3. per account *and* address (`per_subject`): a stranger spends only their own budget;
 * 4. per account from addresses that never signed in to it (`per_account`): bounds a guesser
 *    with many addresses; an address the admin signed in from before neither spends it nor is
 *    refused by it.
 * Budgets 3 and 4 are decided after the check and refuse (429) whatever its outcome: a right
 * and a wrong guess cost the same and a refused attempt tells nothing about the password.
 */
export async function loginAdminWithPassword(deps: DomainDeps, input: PasswordLoginInput, meta: RequestMeta): Promise<TokenPair> {
  assertAdminMethodEnabled(deps.config, 'password');
  const { email } = input;
  const limits = deps.config.rate_limits.login;
  const address = addressKey(meta.ip);
  await enforceRateLimit(deps, 'login', limits, { ip: meta.ip });

  const knownSince = new Date(deps.clock.now().getTime() - KNOWN_ADDRESS_DAYS * 86_400_000);
  const admin = await deps.db
    .selectFrom('admins as a')
    .leftJoin('admin_known_addresses as k', (join) =>
      join
        .onRef('k.admin_id', '=', 'a.id')
        .on('k.address_hash', '=', knownAddressHash(address ?? ''))
        .on('k.last_success_at', '>', knownSince),
    )
    .select(['a.id', 'a.password_hash', 'k.last_success_at as known_at'])
    .where('a.email', '=', email)
    .executeTakeFirst();
  const ok = await deps.passwords.verify(admin?.password_hash ?? null, input.password);

  await spendBudget(deps, `rl:login:sub:admin:${email}:ip:${address ?? 'unknown'}`, limits.per_subject);
  const known = address !== null && Boolean(admin?.known_at);
  if (!known) await spendBudget(deps, `rl:login:acct:admin:${email}`, limits.per_account);

  if (!ok || !admin) {
    await recordAudit(
      { ...deps, actor: anonymous(meta.ip, meta.userAgent) },
      {
        action: 'auth.login_failed',
        entity_type: admin ? 'admin' : null,
        entity_id: admin?.id ?? null,
        details: {
          surface: 'admin',
          method: 'password',
          email,
          reason: !admin ? 'unknown_email' : admin.password_hash ? 'wrong_password' : 'no_password',
        },
      },
    );
    throw new UnauthenticatedError(FAILED);
  }
  const rehash = admin.password_hash && deps.passwords.needsRehash(admin.password_hash) ? await deps.passwords.hash(input.password) : null;

  return unitOfWork(deps, async (uow) => {
    const trx = uow.db;
    const now = deps.clock.now();
    await trx
      .updateTable('admins')
      .set({ last_login_at: now, ...(rehash ? { password_hash: rehash } : {}) })
      .where('id', '=', admin.id)
      .execute();
    if (address) await rememberAddress(trx, admin.id, address, now);
    const pair = await issueSession(deps, trx, { type: 'admin', id: admin.id }, 'password', meta);
    uow.audit(
      {
        action: 'auth.login',
        entity_type: 'admin',
        entity_id: admin.id,
        details: { method: 'password', ...(known ? {} : { new_address: true }) },
      },
      { type: 'admin', id: admin.id, ip: meta.ip ?? null },
    );
    return pair;
  });
}

/** Records a successful sign-in's address and keeps only the most recent few per admin. */
async function rememberAddress(trx: Db, adminId: string, address: string, now: Date): Promise<void> {
  await trx
    .insertInto('admin_known_addresses')
    .values({ admin_id: adminId, address_hash: knownAddressHash(address), last_success_at: now })
    .onConflict((oc) => oc.columns(['admin_id', 'address_hash']).doUpdateSet({ last_success_at: now }))
    .execute();
  await trx
    .deleteFrom('admin_known_addresses')
    .where('admin_id', '=', adminId)
    .where(
      'address_hash',
      'not in',
      trx
        .selectFrom('admin_known_addresses')
        .select('address_hash')
        .where('admin_id', '=', adminId)
        .orderBy('last_success_at', 'desc')
        .orderBy('address_hash')
        .limit(KNOWN_ADDRESSES_PER_ADMIN),
    )
    .execute();
}

/** How many addresses an admin is remembered from (tests, the bound). */
export async function countKnownAddresses(db: Db, adminId: string): Promise<number> {
  const r = await db
    .selectFrom('admin_known_addresses')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('admin_id', '=', adminId)
    .executeTakeFirstOrThrow();
  return r.n;
}

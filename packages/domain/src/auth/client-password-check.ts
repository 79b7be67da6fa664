import type { ClientStatus } from '@svc/db';
import type { DomainDeps } from '../shared/context.ts';
import { clientAddressHash, knownAddressSince } from './client-known-addresses.ts';
import { addressKey, spendBudget } from './rate-limit.ts';

export interface ClientPasswordCheck {
  /** The client of the email, if any. */
  client: { id: string; status: ClientStatus; email_verified_at: Date | null; password_hash: string | null } | undefined;
  ok: boolean;
  /** Whether there was a password to compare with (the audit's no_password). */
  hadPassword: boolean;
}

/**
 * A customer's password, checked with the portal's budgets (docs/portal.md, "Budgets"), for
 * sign-in and for a password change that gives the current password, so neither is a way
 * around the other. The admins' order (admin-login.ts, docs/architecture.md "Sign-in budgets")
 * with the portal's own counters and the same `rate_limits.login` windows:
 * 1. per address (`per_ip`), before any work;
 * 2. the check, always with the same Argon2 work (a dummy hash for an unknown email);
 * 3. per email *and* address (`per_subject`): a stranger spends only their own budget;
 * 4. per email from addresses the client never signed in from (`per_account`): bounds a guesser
 *    with many addresses; an address the client signed in from (client_known_addresses) neither
 *    spends it nor is refused by it, and the magic link is never refused by it.
 * 3 and 4 are spent after the check and refuse (429) whatever its outcome, so a refused attempt
 * tells nothing about the password.
 *
 * An unconfirmed client has no password (confirm-client-email.ts); the one its registration
 * chose waits on the confirmation link, and is compared here while that link is valid, only so
 * that the person who registered hears "confirm your email first" (the sign-in is refused by
 * rule 1 whatever the password).
 */
export async function checkClientPassword(
  deps: DomainDeps,
  email: string,
  password: string,
  ip: string | null | undefined,
): Promise<ClientPasswordCheck> {
  const limits = deps.config.rate_limits.login;
  const address = addressKey(ip);
  await spendBudget(deps, `rl:portal-login:ip:${address ?? 'unknown'}`, limits.per_ip);
  const now = deps.clock.now();
  const row = await deps.db
    .selectFrom('clients as c')
    .leftJoin('client_known_addresses as k', (join) =>
      join
        .onRef('k.client_id', '=', 'c.id')
        .on('k.address_hash', '=', clientAddressHash(ip) ?? '')
        .on('k.last_success_at', '>', knownAddressSince(now)),
    )
    .select(['c.id', 'c.password_hash', 'c.status', 'c.email_verified_at', 'k.last_success_at as known_at'])
    .select((eb) =>
      eb
        .selectFrom('magic_link_tokens as t')
        .select('t.password_hash')
        .whereRef('t.client_id', '=', 'c.id')
        .where('t.password_hash', 'is not', null)
        .where('t.used_at', 'is', null)
        .where('t.expires_at', '>', now)
        .orderBy('t.created_at', 'desc')
        .limit(1)
        .as('registration_password'),
    )
    .where('c.email', '=', email)
    .executeTakeFirst();
  const hash = row ? (row.password_hash ?? (row.email_verified_at === null ? (row.registration_password ?? null) : null)) : null;
  const ok = await deps.passwords.verify(hash, password);

  await spendBudget(deps, `rl:portal-login:sub:client:${email}:ip:${address ?? 'unknown'}`, limits.per_subject);
  const known = address !== null && Boolean(row?.known_at);
  if (!known) await spendBudget(deps, `rl:portal-login:acct:client:${email}`, limits.per_account);

  const client = row
    ? { id: row.id, status: row.status, email_verified_at: row.email_verified_at, password_hash: row.password_hash }
    : undefined;
  return { client, ok: ok && row !== undefined, hadPassword: hash !== null };
}

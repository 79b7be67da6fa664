import { recordAudit } from '../audit/record-audit.ts';
import { clientMaySignIn } from '../clients/client-status.ts';
import { UnauthenticatedError } from '../errors.ts';
import { anonymous, type DomainDeps } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { clientSignInRefusal } from './client-sign-in-refusal.ts';
import type { PasswordLoginInput } from './credential-fields.ts';
import { assertPortalPasswordEnabled } from './portal-methods.ts';
import { addressKey, spendBudget } from './rate-limit.ts';
import { issueSession, type RequestMeta, type TokenPair } from './sessions.ts';

const FAILED = 'invalid email or password';

/**
 * POST /portal/v1/auth/login (spec 5.7: when the client has a password). Unknown email, no
 * password and a wrong one look the same (same message, same Argon2 work). Budgets as for
 * admins, without the remembered addresses: per address first (before any work), then per
 * email *and* address after the check, so a stranger spends only their own budget and nobody
 * can lock a customer out (the magic link is always there besides). The sign-in rule (spec
 * 3.1 rule 1) is said only after the password was right.
 */
export async function loginClientWithPassword(deps: DomainDeps, input: PasswordLoginInput, meta: RequestMeta): Promise<TokenPair> {
  assertPortalPasswordEnabled(deps.config);
  const limits = deps.config.rate_limits.login;
  const address = addressKey(meta.ip) ?? 'unknown';
  await spendBudget(deps, `rl:portal-login:ip:${address}`, limits.per_ip);
  const client = await deps.db
    .selectFrom('clients')
    .select(['id', 'password_hash', 'status', 'email_verified_at'])
    .where('email', '=', input.email)
    .executeTakeFirst();
  const ok = await deps.passwords.verify(client?.password_hash ?? null, input.password);
  await spendBudget(deps, `rl:portal-login:sub:client:${input.email}:ip:${address}`, limits.per_subject);
  const actor = anonymous(meta.ip, meta.userAgent);
  if (!ok || !client) {
    await recordAudit(
      { ...deps, actor },
      {
        action: 'auth.login_failed',
        entity_type: client ? 'client' : null,
        entity_id: client?.id ?? null,
        details: {
          surface: 'portal',
          method: 'password',
          email: input.email,
          reason: !client ? 'unknown_email' : client.password_hash ? 'wrong_password' : 'no_password',
        },
      },
    );
    throw new UnauthenticatedError(FAILED);
  }
  if (!clientMaySignIn(client)) {
    await recordAudit(
      { ...deps, actor },
      {
        action: 'auth.login_refused',
        entity_type: 'client',
        entity_id: client.id,
        details: {
          surface: 'portal',
          method: 'password',
          reason: client.email_verified_at ? `client_${client.status}` : 'email_unconfirmed',
        },
      },
    );
    throw clientSignInRefusal(client);
  }
  const rehash =
    client.password_hash && deps.passwords.needsRehash(client.password_hash) ? await deps.passwords.hash(input.password) : null;
  return unitOfWork({ ...deps, actor }, async (uow) => {
    if (rehash) await uow.db.updateTable('clients').set({ password_hash: rehash }).where('id', '=', client.id).execute();
    const pair = await issueSession(deps, uow.db, { type: 'client', id: client.id }, 'password', meta);
    uow.audit(
      { action: 'auth.login', entity_type: 'client', entity_id: client.id, details: { surface: 'portal', method: 'password' } },
      { type: 'client', id: client.id, ip: meta.ip ?? null },
    );
    return pair;
  });
}

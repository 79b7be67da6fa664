import { recordAudit } from '../audit/record-audit.ts';
import { clientMaySignIn } from '../clients/client-status.ts';
import { UnauthenticatedError } from '../errors.ts';
import { anonymous, type DomainDeps } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { rememberClientAddress } from './client-known-addresses.ts';
import { checkClientPassword } from './client-password-check.ts';
import { clientSignInRefusal } from './client-sign-in-refusal.ts';
import type { PasswordLoginInput } from './credential-fields.ts';
import { assertPortalPasswordEnabled } from './portal-methods.ts';
import { issueSession, type RequestMeta, type TokenPair } from './sessions.ts';

const FAILED = 'invalid email or password';

/**
 * POST /portal/v1/auth/login (spec 5.7: when the client has a password). Unknown email, no
 * password and a wrong one look the same (same message, same Argon2 work). The budgets are the
 * check's (checkClientPassword: per address, per email and address, per email from unknown
 * addresses), none of which can keep a customer out (the magic link is always there, and an
 * address they signed in from is not refused by the account-wide one). The sign-in rule (spec
 * 3.1 rule 1) is said only after the password was right. A success remembers the address.
 */
export async function loginClientWithPassword(deps: DomainDeps, input: PasswordLoginInput, meta: RequestMeta): Promise<TokenPair> {
  assertPortalPasswordEnabled(deps.config);
  const { client, ok, hadPassword } = await checkClientPassword(deps, input.email, input.password, meta.ip);
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
          reason: !client ? 'unknown_email' : hadPassword ? 'wrong_password' : 'no_password',
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
    await rememberClientAddress(uow.db, client.id, meta.ip, deps.clock.now());
    const pair = await issueSession(deps, uow.db, { type: 'client', id: client.id }, 'password', meta);
    uow.audit(
      { action: 'auth.login', entity_type: 'client', entity_id: client.id, details: { surface: 'portal', method: 'password' } },
      { type: 'client', id: client.id, ip: meta.ip ?? null },
    );
    return pair;
  });
}

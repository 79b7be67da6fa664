import { recordAudit } from '../audit/record-audit.ts';
import { UnauthenticatedError } from '../errors.ts';
import { anonymous, type DomainDeps } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import type { PasswordLoginInput } from './credential-fields.ts';
import { assertAdminMethodEnabled } from './methods.ts';
import { enforceRateLimit } from './rate-limit.ts';
import { issueSession, type RequestMeta, type TokenPair } from './sessions.ts';

const FAILED = 'invalid email or password';

/**
 * Admin password sign-in. Unknown email, no password and wrong password look the same
 * from outside (same message, same Argon2 work); each failure is audited.
 */
export async function loginAdminWithPassword(deps: DomainDeps, input: PasswordLoginInput, meta: RequestMeta): Promise<TokenPair> {
  assertAdminMethodEnabled(deps.config, 'password');
  const { email } = input;
  await enforceRateLimit(deps, 'login', deps.config.rate_limits.login, { ip: meta.ip, subject: `admin:${email}` });

  const admin = await deps.db.selectFrom('admins').select(['id', 'password_hash']).where('email', '=', email).executeTakeFirst();
  const ok = await deps.passwords.verify(admin?.password_hash ?? null, input.password);
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
    const pair = await issueSession(deps, trx, { type: 'admin', id: admin.id }, 'password', meta);
    uow.audit(
      {
        action: 'auth.login',
        entity_type: 'admin',
        entity_id: admin.id,
        details: { method: 'password' },
      },
      { type: 'admin', id: admin.id, ip: meta.ip ?? null },
    );
    return pair;
  });
}

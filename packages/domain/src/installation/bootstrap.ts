import { z } from 'zod';
import { type AdminView, adminView } from '../admins/admin-view.ts';
import { insertAdmin } from '../admins/create-admin.ts';
import { recordAudit } from '../audit/record-audit.ts';
import { Email, NewPassword } from '../auth/credential-fields.ts';
import { enforceRateLimit } from '../auth/rate-limit.ts';
import type { RequestMeta } from '../auth/sessions.ts';
import { NotFoundError, UnauthenticatedError } from '../errors.ts';
import { anonymous, type DomainDeps, SYSTEM, withActor } from '../shared/context.ts';
import { advisoryXactLock } from '../shared/locks.ts';
import { randomToken, sha256Hex } from '../shared/secrets.ts';
import { type UnitOfWorkDeps, unitOfWork } from '../shared/unit-of-work.ts';

const LOCK = 'svc.setup';

/**
 * Spec 3.4: at every start while no admin exists, a fresh one-time setup token replaces
 * any earlier one (only its hash is stored). Returns the token for the process log, or
 * null when the installation already has an admin.
 */
export async function beginBootstrap(deps: UnitOfWorkDeps): Promise<string | null> {
  return unitOfWork(deps, async (uow) => {
    const trx = uow.db;
    await advisoryXactLock(trx, LOCK);
    const admin = await trx.selectFrom('admins').select('id').limit(1).executeTakeFirst();
    if (admin) {
      await trx.deleteFrom('setup_tokens').execute();
      return null;
    }
    const token = randomToken(32);
    await trx.deleteFrom('setup_tokens').execute();
    await trx
      .insertInto('setup_tokens')
      .values({ token_hash: sha256Hex(token), created_at: deps.clock.now() })
      .execute();
    return token;
  });
}

/**
 * The line an operator waits for after the setup token (docs/observability.md): the
 * installation has its first admin (POST /setup makes an owner; `svc admin create` the role
 * asked for), so bootstrap mode is over. The id and the email an operator recognises; never the
 * password or the token.
 */
export function logSetupCompleted(
  deps: Pick<DomainDeps, 'log'>,
  admin: { id: string; email: string; role: string },
  via: { surface: 'api' | 'cli'; ip?: string | null | undefined },
): void {
  const how = via.surface === 'api' ? 'POST /api/v1/setup' : 'svc admin create';
  deps.log.info(
    { admin_id: admin.id, email: admin.email, role: admin.role, via: via.surface, ...(via.ip ? { ip: via.ip } : {}) },
    `setup completed: ${admin.email} is the first admin (${admin.role}, ${how}); bootstrap mode is over`,
  );
}

export async function setupRequired(deps: Pick<DomainDeps, 'db'>): Promise<boolean> {
  const admin = await deps.db.selectFrom('admins').select('id').limit(1).executeTakeFirst();
  return !admin;
}

/** The setup endpoint exists only in bootstrap mode; afterwards it is 404, whatever is sent. */
export async function assertBootstrapMode(deps: Pick<DomainDeps, 'db'>): Promise<void> {
  if (!(await setupRequired(deps))) throw new NotFoundError('route');
}

/** POST /setup: the token from the process log and the first owner's credentials. */
export const SetupInput = z
  .object({ token: z.string().min(1).max(256), email: Email, password: NewPassword })
  .strict()
  .brand<'SetupInput'>();
export type SetupInput = z.output<typeof SetupInput>;

/**
 * POST /setup: the valid token creates the first owner, once. Afterwards (an admin exists)
 * the endpoint is gone: NotFound, whatever the body.
 */
export async function completeSetup(deps: DomainDeps, input: SetupInput, meta: RequestMeta): Promise<AdminView> {
  await assertBootstrapMode(deps);
  await enforceRateLimit(deps, 'setup', deps.config.rate_limits.setup, { ip: meta.ip });
  const { email } = input;
  const hash = await deps.passwords.hash(input.password);

  // The setup is the system's act (spec 3.4), from the operator's address.
  const system = withActor(deps, { ...SYSTEM, ip: meta.ip ?? null });
  const result = await unitOfWork(system, async (uow) => {
    const trx = uow.db;
    await advisoryXactLock(trx, LOCK);
    const admin = await trx.selectFrom('admins').select('id').limit(1).executeTakeFirst();
    if (admin) return { gone: true as const };
    const used = await trx
      .deleteFrom('setup_tokens')
      .where('token_hash', '=', sha256Hex(input.token))
      .returning('token_hash')
      .executeTakeFirst();
    if (!used) return { invalid: true as const };
    await trx.deleteFrom('setup_tokens').execute();
    const row = await insertAdmin(trx, system, email, hash, 'owner');
    uow.audit({ action: 'setup.completed', entity_type: 'admin', entity_id: row.id, details: { email, role: 'owner' } });
    return { admin: adminView(row) };
  });

  if ('gone' in result) throw new NotFoundError('route');
  if ('invalid' in result) {
    await recordAudit(
      { ...deps, actor: anonymous(meta.ip, meta.userAgent) },
      {
        action: 'setup.token_rejected',
        details: { email },
      },
    );
    throw new UnauthenticatedError('invalid setup token');
  }
  logSetupCompleted(deps, result.admin, { surface: 'api', ip: meta.ip });
  return result.admin;
}

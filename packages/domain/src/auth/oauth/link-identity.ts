import type { OAuthSurface } from '@svc/db';
import { ConflictError, DomainError, NotFoundError, UnauthenticatedError } from '../../errors.ts';
import { anonymous, type DomainDeps } from '../../shared/context.ts';
import { unitOfWork } from '../../shared/unit-of-work.ts';
import type { RequestMeta } from '../sessions.ts';
import { identityTable, insertIdentity, linkedProviderUser } from './identity-records.ts';
import { type IdentityView, identityView } from './identity-view.ts';
import { checkedProfile, type OAuthProfile } from './provider.ts';
import { surfaceProviders } from './registry.ts';

const subjectType = (surface: OAuthSurface) => (surface === 'admin' ? 'admin' : 'client') as 'admin' | 'client';

/**
 * Spec 5.6 rule 4, from settings: the signed-in subject who started the request gets the
 * identity, whatever its email (they proved both sides), and only while the session it asked
 * in is live (signed out, ended or expired since: 401 `link_session_ended`, nothing linked).
 * An identity of someone else, or a second identity of one provider for the same subject: 409.
 */
export async function linkFromSettings(
  deps: DomainDeps,
  surface: OAuthSurface,
  provider: string,
  link: { subjectId: string; sessionId: string | null },
  given: OAuthProfile,
  meta: RequestMeta,
): Promise<IdentityView> {
  const { subjectId } = link;
  const profile = checkedProfile(given);
  const type = subjectType(surface);
  return unitOfWork({ ...deps, actor: { ...anonymous(meta.ip, meta.userAgent), type, id: subjectId } }, async (uow) => {
    const trx = uow.db;
    const now = deps.clock.now();
    const exists =
      surface === 'admin'
        ? await trx.selectFrom('admins').select('id').where('id', '=', subjectId).forUpdate().executeTakeFirst()
        : await trx.selectFrom('clients').select('id').where('id', '=', subjectId).forUpdate().executeTakeFirst();
    if (!exists) throw new UnauthenticatedError('the account that started linking no longer exists');
    const session = link.sessionId
      ? await trx
          .selectFrom('sessions')
          .select('id')
          .where('id', '=', link.sessionId)
          .where('subject_type', '=', type)
          .where('subject_id', '=', subjectId)
          .where('revoked_at', 'is', null)
          .where('expires_at', '>', now)
          .executeTakeFirst()
      : undefined;
    if (!session) {
      throw new DomainError('unauthenticated', 'the session that asked for this link has ended; sign in and link again', undefined, {
        reason: 'link_session_ended',
      });
    }
    const { table, owner } = identityTable(surface);
    const current = (await trx
      .selectFrom(table)
      .selectAll()
      .where('provider', '=', provider)
      .where('provider_user_id', '=', profile.provider_user_id)
      .executeTakeFirst()) as Record<string, unknown> | undefined;
    if (current && current[owner] !== subjectId) {
      throw new ConflictError(`this ${provider} account is already linked to another ${type === 'admin' ? 'administrator' : 'account'}`, {
        provider: 'linked to someone else',
      });
    }
    if (!current) {
      if (await linkedProviderUser(trx, surface, subjectId, provider))
        throw new ConflictError(`you already linked a ${provider} account; unlink it first`, { provider: 'already linked' });
      await insertIdentity(trx, surface, {
        provider,
        providerUserId: profile.provider_user_id,
        subjectId,
        email: profile.email,
        now,
        usedNow: false,
      });
      uow.audit({
        action: 'auth.oauth_linked',
        entity_type: type,
        entity_id: subjectId,
        details: { provider, email: profile.email, how: 'settings' },
      });
    }
    const row = await trx
      .selectFrom(table)
      .select(['provider', 'email', 'created_at', 'last_used_at'])
      .where('provider', '=', provider)
      .where('provider_user_id', '=', profile.provider_user_id)
      .executeTakeFirstOrThrow();
    return identityView(row);
  });
}

/** GET /auth/identities on either surface: the signed-in subject's linked providers. */
export async function listIdentities(deps: DomainDeps, surface: OAuthSurface, subjectId: string): Promise<IdentityView[]> {
  const rows =
    surface === 'admin'
      ? await deps.db
          .selectFrom('admin_oauth_identities')
          .select(['provider', 'email', 'created_at', 'last_used_at'])
          .where('admin_id', '=', subjectId)
          .orderBy('provider')
          .execute()
      : await deps.db
          .selectFrom('client_oauth_identities')
          .select(['provider', 'email', 'created_at', 'last_used_at'])
          .where('client_id', '=', subjectId)
          .orderBy('provider')
          .execute();
  return rows.map(identityView);
}

/**
 * DELETE /auth/identities/{provider}: unlinks. An admin keeps a way in: the last identity of
 * an admin who cannot sign in by password (none set, or auth.password_login off) and has no
 * other identity of a configured provider is not removed (409). A client always keeps the
 * magic link (spec 5.7), so theirs always go.
 */
export async function unlinkIdentity(
  deps: DomainDeps,
  surface: OAuthSurface,
  subjectId: string,
  provider: string,
  meta: RequestMeta,
): Promise<void> {
  const type = subjectType(surface);
  await unitOfWork({ ...deps, actor: { ...anonymous(meta.ip, meta.userAgent), type, id: subjectId } }, async (uow) => {
    const trx = uow.db;
    if (surface === 'admin') {
      // Locked: two unlinks at once cannot each leave the other as the last way in.
      const admin = await trx
        .selectFrom('admins')
        .select(['id', 'password_hash'])
        .where('id', '=', subjectId)
        .forUpdate()
        .executeTakeFirst();
      if (!admin) throw new UnauthenticatedError('the signed-in administrator no longer exists');
      const mine = await trx.selectFrom('admin_oauth_identities').select(['provider']).where('admin_id', '=', subjectId).execute();
      if (!mine.some((r) => r.provider === provider)) throw new NotFoundError('identity', provider);
      const configured = surfaceProviders(deps.config, 'admin');
      const otherWays = mine.filter((r) => r.provider !== provider && Object.hasOwn(configured, r.provider)).length;
      const password = Boolean(admin.password_hash) && deps.config.auth.password_login;
      if (!password && otherWays === 0) {
        throw new ConflictError(
          `${provider} is your last way to sign in (no password sign-in and no other linked provider); link another provider or set a password first`,
          {
            provider: 'last way in',
          },
        );
      }
      await trx.deleteFrom('admin_oauth_identities').where('admin_id', '=', subjectId).where('provider', '=', provider).execute();
    } else {
      const gone = await trx
        .deleteFrom('client_oauth_identities')
        .where('client_id', '=', subjectId)
        .where('provider', '=', provider)
        .executeTakeFirst();
      if (Number(gone.numDeletedRows) === 0) throw new NotFoundError('identity', provider);
    }
    uow.audit({ action: 'auth.oauth_unlinked', entity_type: type, entity_id: subjectId, details: { provider } });
  });
}

import type { OAuthSurface } from '@svc/db';
import { clientMaySignIn } from '../../clients/client-status.ts';
import { confirmClientEmail } from '../../clients/confirm-client-email.ts';
import { registerClient } from '../../clients/register-client.ts';
import { anonymous, type DomainDeps } from '../../shared/context.ts';
import { type UnitOfWork, unitOfWork } from '../../shared/unit-of-work.ts';
import { clientSignInRefusal } from '../client-sign-in-refusal.ts';
import { issueSession, type RequestMeta, type TokenPair } from '../sessions.ts';
import { insertIdentity, linkedProviderUser } from './identity-records.ts';
import { checkedProfile, type OAuthProfile } from './provider.ts';

/** Why a sign-in was refused: the problem's status, a stable reason, a sentence for the user. */
export interface Refusal {
  status: 'unauthenticated' | 'forbidden' | 'conflict';
  reason:
    | 'email_not_verified'
    | 'no_account'
    | 'no_email'
    | 'registration_closed'
    | 'pending_approval'
    | 'client_may_not_sign_in'
    | 'subject_gone'
    | 'provider_already_linked';
  message: string;
  subjectId?: string;
}

type Outcome = { pair: TokenPair } | { refused: Refusal };

/**
 * Spec 5.6 rules 3-6 with a profile in hand, in one transaction:
 * 1. the identity (provider, provider_user_id) exists on this surface: its subject signs in;
 * 2. else a subject of this surface has the profile's email: linked automatically only when
 *    the provider says email_verified (spec 7.2), otherwise refused and nothing linked;
 * 3. else the admin surface refuses (no self-registration, rule 5) and the portal follows
 *    portal_auth.registration: closed refuses, application makes a pending client (sign-in
 *    refused until approved), open makes an active client with a verified email and signs in;
 *    both record the event client.registered with the mode. An unverified provider email never registers (the address
 *    would be squatted unconfirmed): the user registers by email instead.
 * The profile's email passes the one Email rule first (checkedProfile): one that fails counts
 * as none, so it never becomes an account's email or links by lookalike.
 * A client signs in only when clientMaySignIn (spec 3.1 rule 1), whatever the method.
 * A refusal is returned, not thrown, so what was written before it (a pending registration)
 * is committed; the caller audits it.
 */
export async function signInWithProfile(
  deps: DomainDeps,
  surface: OAuthSurface,
  provider: string,
  given: OAuthProfile,
  meta: RequestMeta,
): Promise<Outcome> {
  const profile = checkedProfile(given);
  const method = `oauth:${provider}`;
  return unitOfWork({ ...deps, actor: anonymous(meta.ip, meta.userAgent) }, async (uow) => {
    const now = deps.clock.now();
    if (surface === 'admin') {
      const subjectId = await adminOf(uow, provider, profile, now);
      if (typeof subjectId !== 'string') return subjectId;
      await uow.db.updateTable('admins').set({ last_login_at: now }).where('id', '=', subjectId).execute();
      const pair = await issueSession(deps, uow.db, { type: 'admin', id: subjectId }, method, meta);
      uow.audit(
        { action: 'auth.login', entity_type: 'admin', entity_id: subjectId, details: { method } },
        { type: 'admin', id: subjectId, ip: meta.ip ?? null },
      );
      return { pair };
    }
    const client = await clientOf(deps, uow, provider, profile, now);
    if ('refused' in client) return client;
    if (!clientMaySignIn(client)) {
      const why = clientSignInRefusal(client).message;
      return refused('forbidden', client.status === 'pending' ? 'pending_approval' : 'client_may_not_sign_in', why, client.id);
    }
    const pair = await issueSession(deps, uow.db, { type: 'client', id: client.id }, method, meta);
    uow.audit(
      { action: 'auth.login', entity_type: 'client', entity_id: client.id, details: { method } },
      { type: 'client', id: client.id, ip: meta.ip ?? null },
    );
    return { pair };
  });
}

const refused = (status: Refusal['status'], reason: Refusal['reason'], message: string, subjectId?: string): { refused: Refusal } => ({
  refused: { status, reason, message, ...(subjectId ? { subjectId } : {}) },
});

const unverified = (provider: string, email: string, subjectId: string) =>
  refused(
    'forbidden',
    'email_not_verified',
    `an account with the email ${email} exists, but ${provider} does not confirm that this email is yours, so it is not linked automatically: sign in another way and link ${provider} from settings`,
    subjectId,
  );

/** The admin of an identity, or of a verified email (linked now), or a refusal. */
async function adminOf(uow: UnitOfWork, provider: string, profile: OAuthProfile, now: Date): Promise<string | { refused: Refusal }> {
  const trx = uow.db;
  const known = await trx
    .updateTable('admin_oauth_identities')
    .set({ last_used_at: now })
    .where('provider', '=', provider)
    .where('provider_user_id', '=', profile.provider_user_id)
    .returning('admin_id')
    .executeTakeFirst();
  if (known) return known.admin_id;
  const admin = profile.email
    ? await trx.selectFrom('admins').select('id').where('email', '=', profile.email).executeTakeFirst()
    : undefined;
  if (!admin || !profile.email) {
    return refused(
      'forbidden',
      profile.email ? 'no_account' : 'no_email',
      `no administrator has ${profile.email ? `the email ${profile.email}` : `the ${provider} account's email (${provider} gave none)`}; administrators are created by an owner, not by signing in`,
    );
  }
  if (!profile.email_verified) return unverified(provider, profile.email, admin.id);
  if (await linkedProviderUser(trx, 'admin', admin.id, provider)) {
    return refused(
      'conflict',
      'provider_already_linked',
      `the administrator ${profile.email} is linked to another ${provider} account; sign in with that one`,
      admin.id,
    );
  }
  await insertIdentity(trx, 'admin', {
    provider,
    providerUserId: profile.provider_user_id,
    subjectId: admin.id,
    email: profile.email,
    now,
    usedNow: true,
  });
  uow.audit(
    {
      action: 'auth.oauth_linked',
      entity_type: 'admin',
      entity_id: admin.id,
      details: { provider, email: profile.email, how: 'automatic' },
    },
    { type: 'admin', id: admin.id },
  );
  return admin.id;
}

interface ClientState {
  id: string;
  status: 'pending' | 'active' | 'rejected' | 'disabled';
  email_verified_at: Date | null;
}

/** The client of an identity, of a verified email (linked now), a new registration, or a refusal. */
async function clientOf(
  deps: DomainDeps,
  uow: UnitOfWork,
  provider: string,
  profile: OAuthProfile,
  now: Date,
): Promise<ClientState | { refused: Refusal }> {
  const trx = uow.db;
  const known = await trx
    .updateTable('client_oauth_identities')
    .set({ last_used_at: now })
    .where('provider', '=', provider)
    .where('provider_user_id', '=', profile.provider_user_id)
    .returning('client_id')
    .executeTakeFirst();
  if (known) {
    const c = await trx
      .selectFrom('clients')
      .select(['id', 'status', 'email_verified_at'])
      .where('id', '=', known.client_id)
      .executeTakeFirstOrThrow();
    return c;
  }
  if (!profile.email) return refused('forbidden', 'no_email', `${provider} gave no email address; register or sign in by email instead`);
  const existing = await trx
    .selectFrom('clients')
    .select(['id', 'status', 'email_verified_at'])
    .where('email', '=', profile.email)
    .executeTakeFirst();
  if (existing) {
    if (!profile.email_verified) return unverified(provider, profile.email, existing.id);
    if (await linkedProviderUser(trx, 'client', existing.id, provider)) {
      return refused(
        'conflict',
        'provider_already_linked',
        `the account ${profile.email} is linked to another ${provider} account; sign in with that one`,
        existing.id,
      );
    }
    await insertIdentity(trx, 'client', {
      provider,
      providerUserId: profile.provider_user_id,
      subjectId: existing.id,
      email: profile.email,
      now,
      usedNow: true,
    });
    // The provider vouches for the address: it confirms the email as a magic link would (spec 3.1),
    // and keeps no password set before (pre-hijacking, confirm-client-email.ts).
    const verifiedAt = await confirmClientEmail(uow, existing.id, now, { method: `oauth:${provider}` });
    uow.audit(
      {
        action: 'auth.oauth_linked',
        entity_type: 'client',
        entity_id: existing.id,
        details: { provider, email: profile.email, how: 'automatic' },
      },
      { type: 'client', id: existing.id },
    );
    return { ...existing, email_verified_at: verifiedAt };
  }
  const mode = deps.config.portal_auth.registration;
  if (mode === 'closed') {
    return refused('forbidden', 'registration_closed', `no account has the email ${profile.email}, and registration is closed`);
  }
  if (!profile.email_verified) {
    return refused(
      'forbidden',
      'email_not_verified',
      `${provider} does not confirm that ${profile.email} is yours, so no account is made from it: register with your email address instead (a magic link confirms it)`,
    );
  }
  return registerClientByOAuth(deps, uow, provider, profile, now);
}

/**
 * Self-registration through OAuth with a verified email (spec 3.1), by the portal's one
 * registration step (registerClient: mode application pending, mode open active, either with
 * client.registered; 409 for an email taken meanwhile; audited): the email counts as confirmed (the
 * provider vouches), and the identity is linked in the same transaction.
 */
async function registerClientByOAuth(
  deps: DomainDeps,
  uow: UnitOfWork,
  provider: string,
  profile: OAuthProfile,
  now: Date,
): Promise<ClientState> {
  const email = profile.email as string;
  const method = `oauth:${provider}`;
  const row = await registerClient(uow, deps, { email, method, emailVerified: true });
  await insertIdentity(uow.db, 'client', {
    provider,
    providerUserId: profile.provider_user_id,
    subjectId: row.id,
    email,
    now,
    usedNow: true,
  });
  return row;
}

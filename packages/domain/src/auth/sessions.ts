import type { Db, SubjectType } from '@svc/db';
import { sql } from 'kysely';
import { z } from 'zod';
import { recordAudit } from '../audit/record-audit.ts';
import { UnauthenticatedError } from '../errors.ts';
import { type Actor, anonymous, type DomainDeps } from '../shared/context.ts';
import { newId } from '../shared/ids.ts';
import { randomToken, sha256Hex } from '../shared/secrets.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { enforceRateLimit } from './rate-limit.ts';
import { resolveSubject } from './subjects.ts';
import { scopeOf } from './tokens.ts';

export interface TokenPair {
  access_token: string;
  refresh_token: string;
  token_type: 'Bearer';
  /** Seconds until the access token expires. */
  expires_in: number;
  refresh_expires_in: number;
}

export interface SessionSubject {
  type: SubjectType;
  id: string;
}

export interface RequestMeta {
  ip?: string | null | undefined;
  userAgent?: string | null | undefined;
}

/**
 * The one session-issuing step every sign-in method ends in (password, setup, OAuth,
 * magic link): a session row, its first refresh token (only the SHA-256 stored) and an
 * access token carrying the session id. Runs inside the caller's transaction.
 */
export async function issueSession(
  deps: DomainDeps,
  trx: Db,
  subject: SessionSubject,
  method: string,
  meta: RequestMeta,
): Promise<TokenPair> {
  const claims = await resolveSubject(trx, subject.type, subject.id);
  if (!claims) throw new UnauthenticatedError('subject may not sign in');
  const now = deps.clock.now();
  const ttl = deps.config.auth.refresh_token_ttl_seconds;
  const sid = newId('ses', now.getTime());
  await trx
    .insertInto('sessions')
    .values({
      id: sid,
      subject_type: subject.type,
      subject_id: subject.id,
      method,
      ip: meta.ip ?? null,
      user_agent: meta.userAgent?.slice(0, 512) ?? null,
      created_at: now,
      expires_at: new Date(now.getTime() + ttl * 1000),
      refreshed_at: null,
      revoked_at: null,
      revoked_reason: null,
    })
    .execute();
  return mintPair(deps, trx, { sid, sub: subject.id, type: subject.type, role: claims.role, gen: claims.gen });
}

async function mintPair(
  deps: DomainDeps,
  trx: Db,
  s: { sid: string; sub: string; type: SubjectType; role?: string | undefined; gen?: number | undefined },
): Promise<TokenPair> {
  const now = deps.clock.now();
  const ttl = deps.config.auth.refresh_token_ttl_seconds;
  const refresh = randomToken(32);
  await trx
    .insertInto('refresh_tokens')
    .values({
      token_hash: sha256Hex(refresh),
      session_id: s.sid,
      issued_at: now,
      expires_at: new Date(now.getTime() + ttl * 1000),
      used_at: null,
    })
    .execute();
  await trx
    .updateTable('sessions')
    .set({ expires_at: new Date(now.getTime() + ttl * 1000) })
    .where('id', '=', s.sid)
    .execute();
  const access = await deps.tokens.signAccess({
    sub: s.sub,
    scope: scopeOf(s.type),
    sid: s.sid,
    role: s.role as never,
    gen: s.gen,
  });
  return {
    access_token: access.token,
    refresh_token: refresh,
    token_type: 'Bearer',
    expires_in: access.expiresIn,
    refresh_expires_in: ttl,
  };
}

/** POST /auth/refresh, on either surface: the refresh token to rotate. */
export const RefreshInput = z
  .object({ refresh_token: z.string().min(1).max(256) })
  .strict()
  .brand<'RefreshInput'>();
export type RefreshInput = z.output<typeof RefreshInput>;

type RefreshOutcome = { ok: TokenPair } | { fail: string; reuse?: boolean; subjectId?: string };

/**
 * Spec 3.2: an unused refresh token rotates the pair and becomes used; a used one presented
 * again revokes every session of its subject; revoked, expired or unknown tokens fail.
 * `subjectType` is the surface's: an admin token never refreshes on the portal and back.
 */
export async function refreshSession(
  deps: DomainDeps,
  subjectType: SubjectType,
  input: RefreshInput,
  meta: RequestMeta,
): Promise<TokenPair> {
  const limits = deps.config.rate_limits.refresh;
  await enforceRateLimit(deps, 'refresh', limits, { ip: meta.ip });
  const hash = sha256Hex(input.refresh_token);
  const found = await deps.db
    .selectFrom('refresh_tokens as r')
    .innerJoin('sessions as s', 's.id', 'r.session_id')
    .select(['s.subject_id', 's.subject_type'])
    .where('r.token_hash', '=', hash)
    .executeTakeFirst();
  if (found && found.subject_type === subjectType) {
    await enforceRateLimit(deps, 'refresh', limits, { subject: `${found.subject_type}:${found.subject_id}` });
  }

  const outcome: RefreshOutcome = await unitOfWork(deps, async (uow) => {
    const trx = uow.db;
    const row = await trx
      .selectFrom('refresh_tokens as r')
      .innerJoin('sessions as s', 's.id', 'r.session_id')
      .select([
        'r.token_hash',
        'r.used_at',
        'r.expires_at',
        's.id as sid',
        's.subject_type',
        's.subject_id',
        's.revoked_at',
        's.expires_at as session_expires_at',
      ])
      .where('r.token_hash', '=', hash)
      .forUpdate()
      .executeTakeFirst();
    const now = deps.clock.now();
    if (!row || row.subject_type !== subjectType) return { fail: 'unknown refresh token' };
    if (row.used_at) {
      await revokeAllSessions(trx, { type: row.subject_type, id: row.subject_id }, 'refresh_token_reuse', now);
      return { fail: 'refresh token already used; every session of the subject is revoked', reuse: true, subjectId: row.subject_id };
    }
    if (row.revoked_at) return { fail: 'session revoked', subjectId: row.subject_id };
    if (row.expires_at <= now || row.session_expires_at <= now) return { fail: 'refresh token expired', subjectId: row.subject_id };
    const marked = await trx
      .updateTable('refresh_tokens')
      .set({ used_at: now })
      .where('token_hash', '=', hash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    if (Number(marked.numUpdatedRows) !== 1) {
      await revokeAllSessions(trx, { type: row.subject_type, id: row.subject_id }, 'refresh_token_reuse', now);
      return { fail: 'refresh token already used; every session of the subject is revoked', reuse: true, subjectId: row.subject_id };
    }
    const claims = await resolveSubject(trx, row.subject_type, row.subject_id);
    if (!claims) {
      await trx.updateTable('sessions').set({ revoked_at: now, revoked_reason: 'subject_gone' }).where('id', '=', row.sid).execute();
      return { fail: 'subject may no longer sign in', subjectId: row.subject_id };
    }
    await trx.updateTable('sessions').set({ refreshed_at: now }).where('id', '=', row.sid).execute();
    const pair = await mintPair(deps, trx, {
      sid: row.sid,
      sub: row.subject_id,
      type: row.subject_type,
      role: claims.role,
      gen: claims.gen,
    });
    return { ok: pair };
  });

  if ('ok' in outcome) return outcome.ok;
  await recordAudit(
    { ...deps, actor: anonymous(meta.ip, meta.userAgent) },
    {
      action: outcome.reuse ? 'auth.refresh_reuse_detected' : 'auth.refresh_failed',
      entity_type: outcome.subjectId ? subjectType : null,
      entity_id: outcome.subjectId ?? null,
      details: { reason: outcome.fail, surface: subjectType },
    },
  );
  throw new UnauthenticatedError(outcome.fail);
}

/** Logout: only the current session (the access token's sid) is revoked. */
export async function revokeSession(deps: DomainDeps, actor: Actor, sid: string): Promise<void> {
  await unitOfWork(deps, async (uow) => {
    const trx = uow.db;
    const res = await trx
      .updateTable('sessions')
      .set({ revoked_at: deps.clock.now(), revoked_reason: 'logout' })
      .where('id', '=', sid)
      .where('subject_id', '=', actor.id ?? '')
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 1) {
      uow.audit({ action: 'auth.logout', entity_type: 'session', entity_id: sid }, actor);
    }
  });
}

/**
 * "Sign out everywhere": every session of the signed-in subject is revoked, this one included
 * (each refresh token stops working; access tokens expire on their own within 15 minutes).
 * Audited with how many were ended. Returns that number.
 */
export async function revokeEverySession(deps: DomainDeps, actor: Actor): Promise<number> {
  if (!actor.id || (actor.type !== 'admin' && actor.type !== 'client')) return 0;
  const subject: SessionSubject = { type: actor.type, id: actor.id };
  return unitOfWork(deps, async (uow) => {
    const ended = await revokeAllSessions(uow.db, subject, 'logout_everywhere', deps.clock.now());
    uow.audit({ action: 'auth.logout_everywhere', entity_type: subject.type, entity_id: subject.id, details: { sessions: ended } }, actor);
    return ended;
  });
}

export async function revokeAllSessions(trx: Db, subject: SessionSubject, reason: string, now: Date): Promise<number> {
  const res = await trx
    .updateTable('sessions')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('subject_type', '=', subject.type)
    .where('subject_id', '=', subject.id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** Sessions still able to refresh (for tests and the admin view of a subject). */
export async function countActiveSessions(db: Db, subject: SessionSubject, now: Date): Promise<number> {
  const r = await db
    .selectFrom('sessions')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('subject_type', '=', subject.type)
    .where('subject_id', '=', subject.id)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  return r.n;
}

import type { AdminRole } from '@svc/db';
import { recordAudit } from '../audit/record-audit.ts';
import { ForbiddenError, isDomainError, UnauthenticatedError } from '../errors.ts';
import { anonymous, type DomainDeps } from '../shared/context.ts';
import { API_TOKEN_PREFIX, apiTokenHash, apiTokenScopeAllows, checkApiTokenGrant } from './api-tokens.ts';
import { spendBudget } from './rate-limit.ts';
import type { RequestMeta } from './sessions.ts';
import type { AccessClaims, Scope } from './tokens.ts';

/** Refusals audited per address and minute; past that, a flood of bad tokens is not a write flood. */
const AUDITED_REFUSALS_PER_MINUTE = 60;

async function auditAllowed(deps: DomainDeps, ip: string | null | undefined): Promise<boolean> {
  const r = await deps.rateLimiter.hit(
    `rl:audit-refusal:ip:${ip ?? 'unknown'}`,
    AUDITED_REFUSALS_PER_MINUTE,
    60_000,
    deps.clock.now().getTime(),
  );
  return r.allowed;
}

export interface Requirement {
  scope: Scope;
  roles?: readonly AdminRole[] | undefined;
  /** The route's resource family (its tag) and whether it writes: what an API token's scopes are checked against. */
  family?: string | undefined;
  write?: boolean | undefined;
  /** Sessions only (token management, sign-out): an API token is refused. */
  sessionOnly?: boolean | undefined;
}

/** What an API token may be used for, at most: its grant, checked, as claims of its creator as the creator is now. */
async function asApiToken(deps: DomainDeps, secret: string, need: Requirement, ip: string | null | undefined): Promise<AccessClaims> {
  if (need.scope !== 'admin') throw new UnauthenticatedError('API tokens are for the admin API');
  const hash = apiTokenHash(secret);
  const now = deps.clock.now().getTime();
  const grant = checkApiTokenGrant(await deps.apiTokens.get(hash), now, ip);
  const creator = await deps.adminAccess.get(grant.adminId);
  if (!creator) throw new UnauthenticatedError('the admin who made this API token no longer exists');
  const claims: AccessClaims = {
    sub: grant.adminId,
    scope: 'admin',
    role: creator.role,
    sid: `token:${grant.id}`,
    tokenId: grant.id,
    exp: 0,
  };
  if (need.sessionOnly) throw new ForbiddenError('an API token cannot do this: sign in');
  if (!apiTokenScopeAllows(grant.scopes, need.family, need.write === true))
    throw new ForbiddenError(`this API token's scopes do not include ${need.family ?? 'this route'}:${need.write ? 'write' : 'read'}`);
  await spendBudget(deps, `rl:api_token:${grant.id}`, deps.config.rate_limits.api_token);
  noteApiTokenUse(deps, grant.id, now, ip);
  return claims;
}

/** Last use (time, address) written at most once a minute per token and process, never on the request's path. */
const lastNoted = new Map<string, number>();
function noteApiTokenUse(deps: DomainDeps, id: string, now: number, ip: string | null | undefined): void {
  if ((lastNoted.get(id) ?? 0) > now - 60_000) return;
  if (lastNoted.size > 10_000) lastNoted.clear();
  lastNoted.set(id, now);
  void deps.db
    .updateTable('api_tokens')
    .set({ last_used_at: new Date(now), last_used_ip: ip ?? null })
    .where('id', '=', id)
    .execute()
    .catch((err: unknown) => deps.log.warn({ err, api_token_id: id }, 'API token use not recorded'));
}

/**
 * Issue 12.7: an admin's token is good only for the admin as they are now. Deleted: 401. A
 * password changed or reset since the token was signed (another token generation): 401. The
 * role is the admin's current one, not the token's, so a demoted admin's token has the new
 * role's rights. Read through the per-process cache (admin-access.ts).
 */
async function asTheAdminIsNow(deps: DomainDeps, claims: AccessClaims): Promise<AccessClaims> {
  const now = await deps.adminAccess.get(claims.sub);
  if (!now) throw new UnauthenticatedError('the admin of this token no longer exists');
  if ((claims.gen ?? 0) !== now.generation)
    throw new UnauthenticatedError('the password changed after this token was issued; sign in again');
  return now.role === claims.role ? claims : { ...claims, role: now.role };
}

/**
 * The check every protected route declares, before any handler: a bearer token of the
 * route's scope (spec 5.2) and, for admins, a listed role (5.4) held now (see asTheAdminIsNow).
 * Failures are audited.
 */
export async function authorize(
  deps: DomainDeps,
  authorization: string | undefined,
  need: Requirement,
  meta: RequestMeta & { route: () => string },
): Promise<AccessClaims> {
  let claims: AccessClaims | undefined;
  try {
    const m = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
    if (!m) throw new UnauthenticatedError('missing bearer token');
    const bearer = m[1] as string;
    if (bearer.startsWith(API_TOKEN_PREFIX)) claims = await asApiToken(deps, bearer, need, meta.ip);
    else {
      claims = await deps.tokens.verifyAccess(bearer, need.scope);
      if (claims.scope === 'admin') claims = await asTheAdminIsNow(deps, claims);
    }
    if (need.roles && (!claims.role || !need.roles.includes(claims.role))) {
      throw new ForbiddenError(`this action needs role ${need.roles.join(' or ')}`);
    }
    return claims;
  } catch (err) {
    if (isDomainError(err) && (await auditAllowed(deps, meta.ip))) {
      const actor = claims
        ? { type: 'admin' as const, id: claims.sub, role: claims.role, ip: meta.ip ?? null }
        : anonymous(meta.ip, meta.userAgent);
      await recordAudit(
        { ...deps, actor },
        {
          action: err.type === 'forbidden' ? 'auth.forbidden' : 'auth.token_rejected',
          details: { route: meta.route(), reason: err.message, scope: need.scope },
        },
      );
    }
    throw err;
  }
}

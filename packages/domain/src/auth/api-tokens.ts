import type { Db } from '@svc/db';
import { z } from 'zod';
import { cidrMatcher, parseCidrList } from '../billing/providers/source-cidrs.ts';
import { ConflictError, ForbiddenError, NotFoundError, UnauthenticatedError, ValidationError } from '../errors.ts';
import { recordEvent } from '../events/record-event.ts';
import { type MessageBus, TOPICS } from '../shared/bus.ts';
import { createBusInvalidatedCache } from '../shared/bus-invalidated-cache.ts';
import type { Clock } from '../shared/clock.ts';
import type { DomainContext } from '../shared/context.ts';
import { trimmedName } from '../shared/fields.ts';
import { newId } from '../shared/ids.ts';
import { randomToken, sha256Hex } from '../shared/secrets.ts';
import { type UnitOfWork, unitOfWork } from '../shared/unit-of-work.ts';

/** Every API token starts so: the bearer check tells it from a session's JWT by it, and scanners of leaked secrets can too. */
export const API_TOKEN_PREFIX = 'svc_pat_';
/** Random bytes of a token's secret (256 bits), base64url after the prefix. */
const SECRET_BYTES = 32;

/**
 * The families a scope names: the admin API's resource tags (each route belongs to one). A
 * token's scope is `<family>:read` (GET routes of the family), `<family>:write` (every route of
 * it), or `role` (every route the creator's role opens). Token management and the session routes
 * are never open to a token (a token cannot mint tokens).
 */
export const API_TOKEN_FAMILIES = [
  'access-groups',
  'acme-accounts',
  'admins',
  'audit',
  'bulk-jobs',
  'certificates',
  'chains',
  'clients',
  'dns-providers',
  'events',
  'imports',
  'inbound-profiles',
  'inbounds',
  'nodes',
  'payment-providers',
  'payments',
  'plans',
  'settings',
  'stats',
  'subscriptions',
  'webhooks',
] as const;
export type ApiTokenFamily = (typeof API_TOKEN_FAMILIES)[number];

const SCOPE = z.union([
  z.literal('role'),
  z.string().refine((s) => {
    const [family, access, extra] = s.split(':');
    return (
      extra === undefined && (API_TOKEN_FAMILIES as readonly string[]).includes(family ?? '') && (access === 'read' || access === 'write')
    );
  }, 'role, or <family>:read or <family>:write of a family of the admin API'),
]);

export const CreateApiTokenInput = z
  .object({
    name: trimmedName(100),
    scopes: z
      .array(SCOPE)
      .min(1)
      .max(64)
      .transform((s) => [...new Set(s)].sort())
      .meta({ description: '"role" (the creator\'s whole rights), or "<family>:read" / "<family>:write"' }),
    expires_at: z.iso
      .datetime({ offset: true })
      .nullable()
      .default(null)
      .meta({ description: 'null: never (a token can be revoked at any time)' }),
    allowed_ips: z
      .array(z.string().max(64))
      .max(64)
      .nullable()
      .default(null)
      .meta({ description: 'addresses and CIDR ranges the token may be used from; null: any' }),
  })
  .strict();
export type CreateApiTokenInput = z.output<typeof CreateApiTokenInput>;

export interface ApiTokenView {
  id: string;
  name: string;
  admin_id: string;
  scopes: string[];
  prefix: string;
  allowed_ips: string[] | null;
  expires_at: string | null;
  last_used_at: string | null;
  last_used_ip: string | null;
  revoked_at: string | null;
  created_at: string;
}

type Row = {
  id: string;
  name: string;
  admin_id: string;
  scopes: string[];
  prefix: string;
  allowed_ips: string[] | null;
  expires_at: Date | null;
  last_used_at: Date | null;
  last_used_ip: string | null;
  revoked_at: Date | null;
  created_at: Date;
};
const COLUMNS = [
  'id',
  'name',
  'admin_id',
  'scopes',
  'prefix',
  'allowed_ips',
  'expires_at',
  'last_used_at',
  'last_used_ip',
  'revoked_at',
  'created_at',
] as const;
const iso = (d: Date | null) => d?.toISOString() ?? null;
const viewOf = (r: Row): ApiTokenView => ({
  ...r,
  expires_at: iso(r.expires_at),
  last_used_at: iso(r.last_used_at),
  revoked_at: iso(r.revoked_at),
  created_at: r.created_at.toISOString(),
});

/** POST /api-tokens: a new token of the acting admin; the secret is in the answer once, and only its hash is kept. */
export async function createApiToken(ctx: DomainContext, input: CreateApiTokenInput): Promise<ApiTokenView & { token: string }> {
  const adminId = ctx.actor.id;
  if (ctx.actor.type !== 'admin' || !adminId) throw new ForbiddenError('only an admin signed in makes API tokens');
  const now = ctx.clock.now();
  if (input.expires_at !== null && Date.parse(input.expires_at) <= now.getTime())
    throw new ValidationError('invalid API token', { expires_at: 'must be in the future' });
  let allowed: string[] | null = null;
  if (input.allowed_ips !== null) {
    const parsed = parseCidrList(input.allowed_ips.join(' '));
    if ('error' in parsed) throw new ValidationError('invalid API token', { allowed_ips: parsed.error });
    allowed = input.allowed_ips.map((a) => a.trim());
  }
  const secret = `${API_TOKEN_PREFIX}${randomToken(SECRET_BYTES)}`;
  return unitOfWork(ctx, async (uow) => {
    const taken = await uow.db
      .selectFrom('api_tokens')
      .select('id')
      .where('admin_id', '=', adminId)
      .where('name', '=', input.name)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (taken) throw new ConflictError('you have a token of this name', { name: 'already taken' });
    const row = await uow.db
      .insertInto('api_tokens')
      .values({
        id: newId('tok', now.getTime()),
        name: input.name,
        admin_id: adminId,
        scopes: JSON.stringify(input.scopes),
        token_hash: sha256Hex(secret),
        prefix: secret.slice(0, API_TOKEN_PREFIX.length + 4),
        allowed_ips: allowed === null ? null : JSON.stringify(allowed),
        expires_at: input.expires_at === null ? null : new Date(input.expires_at),
        created_at: now,
      })
      .returning(COLUMNS)
      .executeTakeFirstOrThrow();
    uow.audit({
      action: 'api_token.created',
      entity_type: 'api_token',
      entity_id: row.id,
      details: { name: row.name, scopes: input.scopes, expires_at: input.expires_at },
    });
    await recordEvent(
      uow,
      {
        type: 'api_token.created',
        payload: { token_id: row.id, name: row.name, admin_id: adminId, scopes: input.scopes, expires_at: input.expires_at },
      },
      now,
    );
    return { ...viewOf(row), token: secret };
  });
}

/** GET /api-tokens: an owner sees every admin's tokens, anyone else their own. */
export async function listApiTokens(ctx: DomainContext): Promise<ApiTokenView[]> {
  let q = ctx.db.selectFrom('api_tokens').select(COLUMNS).orderBy('created_at', 'desc');
  if (ctx.actor.role !== 'owner') q = q.where('admin_id', '=', ctx.actor.id ?? '');
  return (await q.execute()).map(viewOf);
}

/** DELETE /api-tokens/{id}: revoked at once, in every process (api_tokens.changed). Its creator or an owner. */
export async function revokeApiToken(ctx: DomainContext, id: string): Promise<void> {
  await unitOfWork(ctx, async (uow) => {
    const row = await uow.db
      .selectFrom('api_tokens')
      .select(['id', 'admin_id', 'name', 'token_hash', 'revoked_at'])
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    if (!row || (ctx.actor.role !== 'owner' && row.admin_id !== ctx.actor.id)) throw new NotFoundError('api token', id);
    if (row.revoked_at) return;
    await uow.db.updateTable('api_tokens').set({ revoked_at: ctx.clock.now() }).where('id', '=', id).execute();
    apiTokenChanged(uow, ctx, row.token_hash);
    uow.audit({ action: 'api_token.revoked', entity_type: 'api_token', entity_id: id, details: { name: row.name } });
    await recordEvent(
      uow,
      { type: 'api_token.revoked', payload: { token_id: id, name: row.name, admin_id: row.admin_id } },
      ctx.clock.now(),
    );
  });
}

/** What a presented API token stands for, as the cache holds it (by the secret's hash). */
export interface ApiTokenGrant {
  id: string;
  adminId: string;
  scopes: string[];
  expiresAt: number | null;
  revoked: boolean;
  /** null: any address. */
  allows: ((ip: string) => boolean) | null;
}

export async function loadApiTokenGrant(ctx: Pick<DomainContext, 'db'>, hash: string): Promise<ApiTokenGrant | null> {
  const row = await ctx.db
    .selectFrom('api_tokens')
    .select(['id', 'admin_id', 'scopes', 'expires_at', 'revoked_at', 'allowed_ips'])
    .where('token_hash', '=', hash)
    .executeTakeFirst();
  if (!row) return null;
  const parsed = row.allowed_ips ? parseCidrList(row.allowed_ips.join(' ')) : null;
  return {
    id: row.id,
    adminId: row.admin_id,
    scopes: row.scopes,
    expiresAt: row.expires_at?.getTime() ?? null,
    revoked: row.revoked_at !== null,
    // A list that no longer parses allows nothing.
    allows: parsed === null ? null : 'error' in parsed ? () => false : cidrMatcher(parsed.ranges),
  };
}

/**
 * Whether a token's grant opens a route of `family` (`write`: not a GET): `role` opens every
 * route of the families the creator's role does; `<family>:write` reads too.
 */
export function apiTokenScopeAllows(scopes: readonly string[], family: string | undefined, write: boolean): boolean {
  // Routes outside the families (the session's own, token management) are never a token's.
  if (!family || !(API_TOKEN_FAMILIES as readonly string[]).includes(family)) return false;
  if (scopes.includes('role')) return true;
  return scopes.includes(`${family}:write`) || (!write && scopes.includes(`${family}:read`));
}

/** Checks a grant for one request: refusals say why (expired, revoked, address). */
export function checkApiTokenGrant(grant: ApiTokenGrant | null, now: number, ip: string | null | undefined): ApiTokenGrant {
  if (!grant) throw new UnauthenticatedError('unknown API token');
  if (grant.revoked) throw new UnauthenticatedError('this API token was revoked');
  if (grant.expiresAt !== null && grant.expiresAt <= now) throw new UnauthenticatedError('this API token expired');
  if (grant.allows && !(ip && grant.allows(ip))) throw new UnauthenticatedError('this API token may not be used from this address');
  return grant;
}

/** After commit every process drops what it holds of the token (api_tokens.changed): revocation holds at once everywhere. */
export function apiTokenChanged(uow: UnitOfWork, deps: { apiTokens: ApiTokenCache }, tokenHash: string): void {
  uow.publish(TOPICS.apiTokensChanged, { id: tokenHash });
  uow.afterCommit(() => deps.apiTokens.forget(tokenHash));
}

export interface ApiTokenCache {
  /** The grant of a token by its secret's hash (null: no such token). */
  get(hash: string): Promise<ApiTokenGrant | null>;
  forget(hash?: string): void;
  stop(): Promise<void>;
}

/** Read again at least this often: the bus delivers at most once. */
export const API_TOKEN_MAX_AGE_MS = 10_000;

/**
 * Each process holds the grants of the tokens it saw (by hash), dropped at once on
 * `api_tokens.changed` (revocation, through any process: Redis pub/sub in split mode) and at the
 * latest after API_TOKEN_MAX_AGE_MS. Unknown hashes are held too (null), so a flood of made-up
 * tokens does not become a flood of reads; the cache is bounded.
 */
export async function createApiTokenCache(deps: { db: Db; bus: MessageBus; clock: Clock }): Promise<ApiTokenCache> {
  const cache = createBusInvalidatedCache<ApiTokenGrant | null>(deps, {
    topics: [TOPICS.apiTokensChanged],
    maxAgeMs: API_TOKEN_MAX_AGE_MS,
    maxEntries: 10_000,
    keyOf: (message) => {
      const id = (message as { id?: unknown } | null)?.id;
      return typeof id === 'string' ? id : undefined;
    },
  });
  return { get: (hash) => cache.get(hash, () => loadApiTokenGrant(deps, hash)), forget: cache.forget, stop: cache.stop };
}

export { sha256Hex as apiTokenHash };

import { sql } from 'kysely';
import type { DomainContext } from '../shared/context.ts';
import type { SubFormat } from '../subscriptions/sub-format-rules.ts';
import { MARZBAN_TOKEN_MAX, marzbanTokenHonoured, readMarzbanToken } from './marzban-token.ts';

/** An old link that opens one of our subscriptions: our link token (to answer as /sub/{token} does), and the source it came from. */
export interface LegacyLinkMatch {
  token: string;
  sourceId: string;
  sourceName: string;
  /** What the source called the user (its old /info answers name it). */
  username: string;
}

/** The import sources whose old links are answered, with what verifies them (read per old link: a handful of rows). */
async function linkSources(ctx: Pick<DomainContext, 'db' | 'secrets'>) {
  const rows = await ctx.db
    .selectFrom('import_sources')
    .select(['id', 'name', 'kind', 'link_secret_enc'])
    .orderBy('first_imported_at')
    .execute();
  return rows.map((r) => ({ ...r, secret: r.link_secret_enc ? ctx.secrets.open(r.link_secret_enc) : null }));
}

/**
 * GET /sub/{token} with a token that is not one of ours (docs/import.md, "Old links"): a
 * Marzban (or early PasarGuard) token verified with an imported source's secret, honoured as
 * Marzban honours it (minted after the user was created, not before a revocation) and only if
 * it was minted before the import, for a user whose subscription here has not rotated its link
 * since. The answer is our own token: the link is then answered exactly as ours is, never by a
 * redirect. Null for anything else, after the same work whatever the token (no timing tells a
 * stranger which usernames exist beyond what a valid signature proves).
 */
export async function resolveLegacySubToken(
  ctx: Pick<DomainContext, 'db' | 'secrets'>,
  presented: string,
): Promise<LegacyLinkMatch | null> {
  if (presented.length === 0 || presented.length > MARZBAN_TOKEN_MAX) return null;
  const byKey = await resolveLinkKey(ctx, presented);
  if (byKey) return byKey;
  if (presented.length < 15) return null;
  for (const source of await linkSources(ctx)) {
    if (source.kind !== 'marzban' || !source.secret) continue;
    const claim = readMarzbanToken(presented, source.secret);
    if (!claim) continue;
    const row = await ctx.db
      .selectFrom('imported_users as u')
      .innerJoin('subscriptions as s', 's.id', 'u.subscription_id')
      .select(['u.username', 'u.source_created_at', 'u.links_revoked_at', 'u.links_retired_at', 'u.imported_at', 's.token_enc'])
      .where('u.source_id', '=', source.id)
      .where('u.source_key', '=', claim.username.toLowerCase())
      .executeTakeFirst();
    if (!row || row.links_retired_at) return null;
    if (!marzbanTokenHonoured(claim, { createdAt: row.source_created_at, revokedAt: row.links_revoked_at, importedAt: row.imported_at }))
      return null;
    return { token: ctx.secrets.open(row.token_enc), sourceId: source.id, sourceName: source.name, username: row.username };
  }
  return null;
}

/**
 * A link key's characters (3x-ui's subId, Remnawave's short uuid; Marzneshin's `username/key`):
 * anything else is not one, and costs no read. No part of the pattern can match the same text two
 * ways: it never backtracks on a stranger's path.
 */
const LINK_KEY = /^[A-Za-z0-9_-]{1,64}(?:\/[0-9A-Fa-f]{1,64})?$/;

/**
 * An old link that names the user directly (3x-ui's `/sub/{subId}`, Remnawave's `/{shortUuid}`,
 * Marzneshin's `/sub/{username}/{key}`): the imported user whose
 * link key it is, unless our link rotated since. The key is looked up, not verified: it was the
 * whole secret of the link at the source too.
 */
export async function resolveLinkKey(ctx: Pick<DomainContext, 'db' | 'secrets'>, key: string): Promise<LegacyLinkMatch | null> {
  if (!LINK_KEY.test(key)) return null;
  const row = await ctx.db
    .selectFrom('imported_users as u')
    .innerJoin('import_sources as src', 'src.id', 'u.source_id')
    .innerJoin('subscriptions as s', 's.id', 'u.subscription_id')
    .select(['u.source_id', 'src.name', 'u.username', 'u.links_retired_at', 's.token_enc'])
    .where('u.link_key', '=', key)
    .orderBy('src.first_imported_at')
    .executeTakeFirst();
  if (!row || row.links_retired_at) return null;
  return { token: ctx.secrets.open(row.token_enc), sourceId: row.source_id, sourceName: row.name, username: row.username };
}

/** Old links answered since the last call, per source: added to the source's count (what the operator watches to retire the old host). */
export async function recordLegacyHits(ctx: Pick<DomainContext, 'db' | 'clock'>, hits: ReadonlyMap<string, number>): Promise<void> {
  const now = ctx.clock.now();
  for (const [sourceId, n] of hits)
    if (n > 0)
      await ctx.db
        .updateTable('import_sources')
        .set({ legacy_hits: sql<number>`legacy_hits + ${n}`, last_legacy_hit_at: now })
        .where('id', '=', sourceId)
        .execute();
}

/** Marzneshin's `/sub/{username}/{key}/{client_type}` (`links` is plain text there; here the same links in base64, which apps read alike). */
export const MARZNESHIN_CLIENT_TYPES: Readonly<Record<string, Exclude<SubFormat, 'html'>>> = {
  'sing-box': 'sing-box',
  'clash-meta': 'clash-meta',
  clash: 'clash-meta',
  xray: 'xray-json',
  v2ray: 'base64',
  links: 'base64',
};

/** Remnawave's `/{shortUuid}/{clientType}` (and `/api/sub/...`). */
export const REMNAWAVE_CLIENT_TYPES: Readonly<Record<string, Exclude<SubFormat, 'html'>>> = {
  stash: 'clash-meta',
  singbox: 'sing-box',
  mihomo: 'clash-meta',
  json: 'xray-json',
  'v2ray-json': 'xray-json',
  clash: 'clash-meta',
};

/** Marzban's `/sub/{token}/{client_type}`: the format each of its client types asks for, in ours. */
export const LEGACY_CLIENT_TYPES: Readonly<Record<string, Exclude<SubFormat, 'html'>>> = {
  v2ray: 'base64',
  'v2ray-json': 'xray-json',
  'clash-meta': 'clash-meta',
  clash: 'clash-meta',
  'sing-box': 'sing-box',
  outline: 'base64',
};

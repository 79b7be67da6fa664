import type { Db, OAuthSurface } from '@svc/db';

/**
 * The identity records of one surface (spec 2.2: admin_oauth_identity, client_oauth_identity):
 * the two tables have the same shape but their subject column; every write and lookup of a
 * subject's identity goes through here, whichever surface.
 */
const TABLES = {
  admin: { table: 'admin_oauth_identities', owner: 'admin_id' },
  client: { table: 'client_oauth_identities', owner: 'client_id' },
} as const;

export const identityTable = (surface: OAuthSurface) => TABLES[surface];

/** The provider user id this subject has linked for `provider`, if any (one per provider and subject). */
export async function linkedProviderUser(trx: Db, surface: OAuthSurface, subjectId: string, provider: string): Promise<string | undefined> {
  const { table, owner } = TABLES[surface];
  const row = await trx
    .selectFrom(table)
    .select('provider_user_id')
    .where(owner as never, '=', subjectId as never)
    .where('provider', '=', provider)
    .executeTakeFirst();
  return row?.provider_user_id;
}

/** Links a provider's user to a subject; `usedNow` when the link is made by signing in with it. */
export async function insertIdentity(
  trx: Db,
  surface: OAuthSurface,
  i: { provider: string; providerUserId: string; subjectId: string; email: string | null; now: Date; usedNow: boolean },
): Promise<void> {
  const { table, owner } = TABLES[surface];
  await trx
    .insertInto(table)
    .values({
      provider: i.provider,
      provider_user_id: i.providerUserId,
      [owner]: i.subjectId,
      email: i.email,
      created_at: i.now,
      last_used_at: i.usedNow ? i.now : null,
    } as never)
    .execute();
}

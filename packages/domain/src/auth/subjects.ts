import type { AdminRole, Db, SubjectType } from '@svc/db';

/**
 * What a session needs to know about its subject when it issues an access token: whether
 * the subject may still hold a session, and the claims (role for admins). One resolver per
 * subject type keeps the session engine itself subject-agnostic; the portal adds `client`.
 */
export type SubjectClaims = { role?: AdminRole; gen?: number } | null;
export type SubjectResolver = (db: Db, id: string) => Promise<SubjectClaims>;

const resolvers: Partial<Record<SubjectType, SubjectResolver>> = {
  admin: async (db, id) => {
    const row = await db.selectFrom('admins').select(['role', 'token_generation']).where('id', '=', id).executeTakeFirst();
    return row ? { role: row.role, gen: row.token_generation } : null;
  },
};

export function registerSubjectResolver(type: SubjectType, resolver: SubjectResolver): void {
  resolvers[type] = resolver;
}

export async function resolveSubject(db: Db, type: SubjectType, id: string): Promise<SubjectClaims> {
  const resolver = resolvers[type];
  if (!resolver) throw new Error(`no subject resolver for ${type}`);
  return resolver(db, id);
}

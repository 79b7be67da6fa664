import type { AdminRole, Db, SubjectType } from '@svc/db';
import { clientMaySignIn } from '../clients/client-status.ts';

/**
 * What a session needs to know about its subject when it issues an access token: whether
 * the subject may still hold a session, and the claims (role for admins). One resolver per
 * subject type keeps the session engine itself subject-agnostic.
 */
export type SubjectClaims = { role?: AdminRole; gen?: number } | null;
export type SubjectResolver = (db: Db, id: string) => Promise<SubjectClaims>;

const resolvers: Partial<Record<SubjectType, SubjectResolver>> = {
  admin: async (db, id) => {
    const row = await db.selectFrom('admins').select(['role', 'token_generation']).where('id', '=', id).executeTakeFirst();
    return row ? { role: row.role, gen: row.token_generation } : null;
  },
  // Spec 3.1 rule 1, whatever the method, also at every refresh: a client banned, rejected or
  // deleted since sign-in gets no new access token.
  client: async (db, id) => {
    const row = await db.selectFrom('clients').select(['status', 'email_verified_at']).where('id', '=', id).executeTakeFirst();
    return row && clientMaySignIn(row) ? {} : null;
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

import { type DomainContext, newId } from '@svc/domain';
import { fixtures } from '@svc/testkit';

/** What the customer tests need of the fleet: a node whose inbounds are each granted by an access group of their own. */
export async function servedNode(ctx: DomainContext, inbounds = 1): Promise<{ node: string; inbounds: string[]; groups: string[] }> {
  const f = fixtures(ctx);
  const node = await f.node();
  const profile = await f.profile();
  const ids: string[] = [];
  const groups: string[] = [];
  for (let i = 0; i < inbounds; i++) {
    const inbound = await f.inbound({ node_id: node.id, profile_id: profile.id });
    ids.push(inbound.id);
    groups.push(await accessGroup(ctx, [inbound.id]));
  }
  return { node: node.id, inbounds: ids, groups };
}

/** An access group granting these inbounds. */
export async function accessGroup(ctx: DomainContext, inboundIds: string[] = []): Promise<string> {
  return (await fixtures(ctx).accessGroup({ inbound_ids: inboundIds })).id;
}

/**
 * A signed-in session of the client, the row written directly: it predates the portal's
 * sign-in (`issueSession`, auth/sessions.ts), and the tests using it need only a session that a
 * ban, a password change or a deletion must end, not its tokens.
 */
export async function clientSession(ctx: DomainContext, clientId: string): Promise<string> {
  const now = ctx.clock.now();
  const id = newId('ses', now.getTime());
  await ctx.db
    .insertInto('sessions')
    .values({
      id,
      subject_type: 'client',
      subject_id: clientId,
      method: 'password',
      ip: null,
      user_agent: null,
      created_at: now,
      expires_at: new Date(now.getTime() + 86_400_000),
      refreshed_at: null,
      revoked_at: null,
      revoked_reason: null,
    })
    .execute();
  return id;
}

export const sessionOf = (ctx: DomainContext, id: string) =>
  ctx.db.selectFrom('sessions').select(['revoked_at', 'revoked_reason']).where('id', '=', id).executeTakeFirstOrThrow();

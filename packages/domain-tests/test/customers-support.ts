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

/** desired_revision of each node, to measure what a change bumped. */
export async function revisions(ctx: DomainContext, nodes: readonly string[]): Promise<Record<string, number>> {
  const rows = await ctx.db.selectFrom('nodes').select(['id', 'desired_revision']).where('id', 'in', nodes).execute();
  return Object.fromEntries(rows.map((r) => [r.id, Number(r.desired_revision)]));
}

/** Runs `change` and returns by how much each node's desired_revision moved. */
export async function bumpsOf(
  ctx: DomainContext,
  nodes: readonly string[],
  change: () => Promise<unknown>,
): Promise<Record<string, number>> {
  const before = await revisions(ctx, nodes);
  await change();
  const after = await revisions(ctx, nodes);
  return Object.fromEntries(nodes.map((n) => [n, (after[n] ?? 0) - (before[n] ?? 0)]));
}

/** The audit entries of one entity, oldest first. */
export const auditOf = (ctx: DomainContext, entityId: string) =>
  ctx.db.selectFrom('audit_log').selectAll().where('entity_id', '=', entityId).orderBy('id').execute();

/**
 * A signed-in session of the client, as the portal's sign-in will leave it. Clients cannot
 * sign in yet (no subject resolver, no portal sign-in use case), so the row is written here.
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

import { sql } from 'kysely';
import type { DomainEvent } from '../events/catalogue.ts';
import type { UnitOfWork } from '../shared/unit-of-work.ts';

/**
 * A certificate's new material (issued, renewed, uploaded anew) is on its way to these nodes,
 * whose revisions were just bumped for it: one certificate_rollouts row per node, at the node's
 * desired revision, replacing an earlier material's row still waiting (the node will serve the
 * newest, and is told of that one). The rows become node.certificate_served when the nodes apply
 * (certificateServedEvents).
 */
export async function rollOutCertificate(uow: UnitOfWork, certificateId: string, nodeIds: readonly string[], notAfter: Date, now: Date) {
  if (nodeIds.length === 0) return;
  await sql`
    insert into certificate_rollouts (certificate_id, node_id, revision, not_after, created_at)
    select ${certificateId}, n.id, n.desired_revision, ${notAfter}, ${now} from nodes n where n.id = any(${[...nodeIds]}::text[])
    on conflict (certificate_id, node_id) do update
       set revision = excluded.revision, not_after = excluded.not_after, created_at = excluded.created_at`.execute(uow.db);
}

/**
 * The rollouts these nodes' applied revisions completed, taken off the table (one statement,
 * in the applying unit: each is announced once): node.certificate_served for each.
 */
export async function certificateServedEvents(uow: UnitOfWork, nodeIds: readonly string[]): Promise<DomainEvent[]> {
  if (nodeIds.length === 0) return [];
  const { rows } = await sql<{
    node_id: string;
    name: string;
    certificate_id: string;
    domains: unknown;
    not_after: Date;
    revision: string;
  }>`
    delete from certificate_rollouts r using nodes n, certificates c
     where r.node_id = n.id and c.id = r.certificate_id and n.id = any(${[...nodeIds]}::text[]) and n.applied_revision >= r.revision
    returning r.node_id, n.name, r.certificate_id, c.domains, r.not_after, r.revision::text as revision`.execute(uow.db);
  return rows.map((r) => ({
    type: 'node.certificate_served',
    payload: {
      node_id: r.node_id,
      name: r.name,
      certificate_id: r.certificate_id,
      domains: (typeof r.domains === 'string' ? JSON.parse(r.domains) : r.domains) as string[],
      not_after: new Date(r.not_after).toISOString(),
      revision: Number(r.revision),
    },
  }));
}

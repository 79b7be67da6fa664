import { bumpNodeRevisions, recordAppliedRevisions, recordStatusReports, retireReplica, sweepDeadReplicas, unitOfWork } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed } from '@svc/testkit';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Every statement that writes many node rows locks them in id order first (lockNodesInOrder):
// a revision bump reaching every node, and the gateway's batched ApplyResults, StatusReports
// and stream admissions, run at the same time on a real fleet (issue 17.2 found an admin's
// change refused with a deadlock that way). On PGlite (one connection) they run one after the
// other; on PostgreSQL they overlap.

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

const NODES = 400;

/** NODES node rows `nod_<tag><digits>`, inserted in a shuffled order: the table's physical order is not the ids' order. */
async function seedNodes(tag: string): Promise<{ ids: string[]; shuffled: string[] }> {
  const ids = Array.from({ length: NODES }, (_, i) => `nod_${tag}${String(i).padStart(22, '0')}`);
  const shuffled = [...ids].sort(() => Math.random() - 0.5);
  const now = new Date();
  await sql`
    insert into nodes (id, name, address, created_at, updated_at)
    select id, ${tag} || '-' || id, id || '.example.com', ${now}, ${now} from unnest(${shuffled}::text[]) as id`.execute(bed.deps.db);
  return { ids, shuffled };
}

/** What the gateway writes meanwhile: two status-report batches in flight (as its batchers keep) and a revision bump of every node. */
const batchedWrites = (ids: string[], shuffled: string[]) => [
  recordStatusReports(
    bed.deps,
    shuffled.slice(0, NODES / 2).map((node_id) => ({ node_id, status })),
  ),
  recordStatusReports(
    bed.deps,
    shuffled.slice(NODES / 2).map((node_id) => ({ node_id, status })),
  ),
  unitOfWork(bed.deps, (uow) => bumpNodeRevisions(uow, [...ids].reverse())),
];

const status = {
  xray_running: true,
  cpu_percent: 1,
  memory_used_bytes: 1,
  memory_total_bytes: 2,
  disk_used_bytes: 1,
  disk_total_bytes: 2,
  connections: 0,
  xray_uptime_seconds: 1,
};

describe('node rows written in batches never deadlock against a revision bump', () => {
  it('bumps of every node, batched apply results and status reports at once all succeed, and applied never passes desired', async () => {
    const { ids, shuffled } = await seedNodes('lock');
    for (let round = 1; round <= 8; round++) {
      const reversed = [...ids].reverse();
      await Promise.all([
        unitOfWork(bed.deps, (uow) => bumpNodeRevisions(uow, shuffled)),
        recordAppliedRevisions(
          bed.deps,
          reversed.map((node_id) => ({ node_id, revision: round })),
        ),
        recordStatusReports(
          bed.deps,
          shuffled.map((node_id) => ({ node_id, status })),
        ),
        unitOfWork(bed.deps, (uow) => bumpNodeRevisions(uow, reversed.slice(0, NODES / 2))),
      ]);
    }
    const rows = await bed.deps.db.selectFrom('nodes').select(['desired_revision', 'applied_revision']).where('id', 'in', ids).execute();
    expect(rows).toHaveLength(NODES);
    for (const r of rows) expect(Number(r.applied_revision)).toBeLessThanOrEqual(Number(r.desired_revision));
  });
});

describe("a dead replica's nodes swept while their rows are written in batches (issue 17.3)", () => {
  it('the sweep, batched status reports and revision bumps at once all succeed, round after round', async () => {
    // A restarted gateway sweeps its killed predecessor's nodes offline while it records the
    // reconnecting agents in batches: the sweep's one UPDATE over them locked rows in the
    // table's order, against the batches' id order (deadlocks in the 10,000-agent storm).
    const { ids, shuffled } = await seedNodes('swep');
    for (let round = 1; round <= 24; round++) {
      // Every node held by a replica that no longer refreshes its row.
      await sql`update nodes set connectivity = 'online', stream_replica = 'rep_dead', stream_session = 'stm_old'
        where id = any(${ids}::text[])`.execute(bed.deps.db);
      const swept = await Promise.all([sweepDeadReplicas(bed.deps, 1000, 'rep_live'), ...batchedWrites(ids, shuffled)]);
      expect(swept[0]).toBe(NODES);
    }
    const online = await bed.deps.db.selectFrom('nodes').select('id').where('id', 'in', ids).where('connectivity', '=', 'online').execute();
    expect(online).toHaveLength(0);
  });
});

describe("a replica's clean stop while its nodes' rows are written in batches", () => {
  it('the retirement, batched status reports and revision bumps at once all succeed, round after round', async () => {
    // A replica that stops takes its nodes offline in one statement while the others record
    // status reports and bump revisions in id order: it locks in id order too.
    const { ids, shuffled } = await seedNodes('retr');
    for (let round = 1; round <= 24; round++) {
      await sql`insert into gateway_replicas (id, hostname, heartbeat_at, started_at) values ('rep_stopping', 'test', ${new Date()}, ${new Date()})
        on conflict (id) do update set heartbeat_at = excluded.heartbeat_at`.execute(bed.deps.db);
      await sql`update nodes set connectivity = 'online', stream_replica = 'rep_stopping', stream_session = 'stm_old'
        where id = any(${ids}::text[])`.execute(bed.deps.db);
      await Promise.all([retireReplica(bed.deps, 'rep_stopping'), ...batchedWrites(ids, shuffled)]);
    }
    const online = await bed.deps.db.selectFrom('nodes').select('id').where('id', 'in', ids).where('connectivity', '=', 'online').execute();
    expect(online).toHaveLength(0);
  });
});

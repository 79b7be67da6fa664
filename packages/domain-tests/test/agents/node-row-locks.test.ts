import { bumpNodeRevisions, recordAppliedRevisions, recordStatusReports, unitOfWork } from '@svc/domain';
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

describe('node rows written in batches never deadlock against a revision bump', () => {
  it('bumps of every node, batched apply results and status reports at once all succeed, and applied never passes desired', async () => {
    // Inserted in a shuffled order: the table's physical order is not the ids' order.
    const ids = Array.from({ length: NODES }, (_, i) => `nod_lock${String(i).padStart(22, '0')}`);
    const shuffled = [...ids].sort(() => Math.random() - 0.5);
    const now = new Date();
    await sql`
      insert into nodes (id, name, address, created_at, updated_at)
      select id, 'lock-' || id, id || '.example.com', ${now}, ${now} from unnest(${shuffled}::text[]) as id`.execute(bed.deps.db);
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

import { hostname } from 'node:os';
import { sql } from 'kysely';
import { lockNodesInOrder } from '../fleet/lock-nodes.ts';
import type { DomainDeps } from '../shared/context.ts';
import { type UnitOfWorkDeps, unitOfWork } from '../shared/unit-of-work.ts';

/**
 * Liveness of gateway replicas (connectivity "across replicas", issue 4): each replica
 * refreshes its row every few seconds; a replica silent for `staleAfterMs` is taken for dead
 * and the nodes it held go offline. A replica that stops cleanly retires itself at once.
 */
export async function heartbeatReplica(deps: Pick<DomainDeps, 'db' | 'clock'>, replicaId: string): Promise<void> {
  const now = deps.clock.now();
  await deps.db
    .insertInto('gateway_replicas')
    .values({ id: replicaId, hostname: hostname().slice(0, 255), started_at: now, heartbeat_at: now })
    .onConflict((oc) => oc.column('id').doUpdateSet({ heartbeat_at: now }))
    .execute();
}

/**
 * Sets offline the nodes held by replicas that stopped refreshing, and forgets those replicas.
 * The rows are found first and locked in id order (lockNodesInOrder), then updated if they
 * still qualify: a restarted gateway sweeps its dead predecessor's 10,000 nodes while it admits
 * their reconnecting streams in batches, and one UPDATE over them locked rows in the table's
 * order against the batches' id order: deadlocks, each a second of waiting (issue 17.3).
 */
export async function sweepDeadReplicas(deps: UnitOfWorkDeps, staleAfterMs: number, self?: string): Promise<number> {
  const now = deps.clock.now();
  const cutoff = new Date(now.getTime() - staleAfterMs);
  return unitOfWork(deps, async (uow) => {
    const trx = uow.db;
    const held = trx
      .selectFrom('nodes')
      .select('id')
      .where('connectivity', '=', 'online')
      // Never the sweeping replica's own nodes: it is alive, whatever its row says after a slow write.
      .$if(self !== undefined, (qb) =>
        qb.where((eb) => eb.or([eb('stream_replica', 'is', null), eb('stream_replica', '!=', self as string)])),
      )
      .where((eb) =>
        eb.or([
          eb('stream_replica', 'is', null),
          eb('stream_replica', 'not in', eb.selectFrom('gateway_replicas').select('id').where('heartbeat_at', '>=', cutoff)),
        ]),
      );
    const ids = (await held.execute()).map((r) => r.id);
    let updated = 0;
    if (ids.length > 0) {
      await lockNodesInOrder(trx, ids);
      // Still held by a dead replica once locked (an admission may have taken a row over meanwhile).
      const still = (await held.where(sql<boolean>`id = any(${ids}::text[])`).execute()).map((r) => r.id);
      if (still.length > 0) {
        const result = await trx
          .updateTable('nodes')
          .set({ connectivity: 'offline', stream_replica: null, stream_session: null, last_seen_at: now })
          .where(sql<boolean>`id = any(${still}::text[])`)
          .executeTakeFirst();
        updated = Number(result.numUpdatedRows);
        uow.nodeViewsChanged(still);
      }
    }
    await trx
      .deleteFrom('gateway_replicas')
      .where('heartbeat_at', '<', cutoff)
      .$if(self !== undefined, (qb) => qb.where('id', '!=', self as string))
      .execute();
    return updated;
  });
}

/**
 * A clean stop: this replica's nodes go offline now, not after the staleness window. Their rows
 * are locked in id order first (lockNodesInOrder), as every many-row node write is: a stop while
 * batched status reports and revision bumps run must not deadlock against them.
 */
export async function retireReplica(deps: UnitOfWorkDeps, replicaId: string): Promise<void> {
  await unitOfWork(deps, async (uow) => {
    const trx = uow.db;
    const ids = (await trx.selectFrom('nodes').select('id').where('stream_replica', '=', replicaId).execute()).map((r) => r.id);
    if (ids.length > 0) {
      await lockNodesInOrder(trx, ids);
      // Only rows still held by this replica once locked (another replica may have admitted one meanwhile).
      await trx
        .updateTable('nodes')
        .set({ connectivity: 'offline', stream_replica: null, stream_session: null, last_seen_at: deps.clock.now() })
        .where(sql<boolean>`id = any(${ids}::text[])`)
        .where('stream_replica', '=', replicaId)
        .execute();
      uow.nodeViewsChanged(ids);
    }
    await trx.deleteFrom('gateway_replicas').where('id', '=', replicaId).execute();
  });
}

import { hostname } from 'node:os';
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

/** Sets offline the nodes held by replicas that stopped refreshing, and forgets those replicas. */
export async function sweepDeadReplicas(deps: UnitOfWorkDeps, staleAfterMs: number, self?: string): Promise<number> {
  const now = deps.clock.now();
  const cutoff = new Date(now.getTime() - staleAfterMs);
  return unitOfWork(deps, async (uow) => {
    const trx = uow.db;
    const result = await trx
      .updateTable('nodes')
      .set({ connectivity: 'offline', stream_replica: null, stream_session: null, last_seen_at: now })
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
      )
      .executeTakeFirst();
    await trx
      .deleteFrom('gateway_replicas')
      .where('heartbeat_at', '<', cutoff)
      .$if(self !== undefined, (qb) => qb.where('id', '!=', self as string))
      .execute();
    return Number(result.numUpdatedRows);
  });
}

/** A clean stop: this replica's nodes go offline now, not after the staleness window. */
export async function retireReplica(deps: UnitOfWorkDeps, replicaId: string): Promise<void> {
  await unitOfWork(deps, async (uow) => {
    const trx = uow.db;
    await trx
      .updateTable('nodes')
      .set({ connectivity: 'offline', stream_replica: null, stream_session: null, last_seen_at: deps.clock.now() })
      .where('stream_replica', '=', replicaId)
      .execute();
    await trx.deleteFrom('gateway_replicas').where('id', '=', replicaId).execute();
  });
}

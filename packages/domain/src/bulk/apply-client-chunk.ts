import type { ClientStatus } from '@svc/db';
import { clientStatusConsequences } from '../clients/change-client-status.ts';
import { CLIENT_TRANSITIONS, type ClientEvent } from '../clients/client-status.ts';
import { clientDeleteBlockers, removeClient } from '../clients/delete-client.ts';
import type { UnitOfWork } from '../shared/unit-of-work.ts';
import type { ClientBulkAction } from './bulk-input.ts';
import type { ChunkResult } from './chunk.ts';

const MOVE: Record<Exclude<ClientBulkAction['type'], 'delete'>, ClientEvent> = {
  approve: 'approve',
  reject: 'reject',
  disable: 'ban',
  enable: 'unban',
};

/**
 * One chunk of a client bulk job: each client locked and moved by the state machine
 * (client-status.ts; a move it refuses from the client's status is skipped, not an error),
 * with the consequences a single move has (sessions, its event), audited per client naming the
 * job; delete skips a client that still has subscriptions or payments. The nodes are returned
 * for the job's one bump at its end.
 */
export async function applyClientChunk(
  uow: UnitOfWork,
  jobId: string,
  action: ClientBulkAction,
  ids: readonly string[],
  now: Date,
): Promise<ChunkResult> {
  const trx = uow.db;
  const rows = await trx.selectFrom('clients').selectAll().where('id', 'in', ids).orderBy('id').forUpdate().execute();
  const found = new Set(rows.map((r) => r.id));
  const skipped = ids.filter((id) => !found.has(id));
  const nodes = new Set<string>();
  if (rows.length > 0) uow.subscriptionLinksChanged();
  for (const r of rows) {
    if (action.type === 'delete') {
      const { subs, payments } = await clientDeleteBlockers(trx, r.id);
      if (subs.length > 0 || payments.length > 0) {
        skipped.push(r.id);
        continue;
      }
      await removeClient(uow, r);
      continue;
    }
    const move = CLIENT_TRANSITIONS.find((t) => t.event === MOVE[action.type] && t.from === r.status);
    if (!move) {
      skipped.push(r.id);
      continue;
    }
    const to: ClientStatus = move.to;
    await trx.updateTable('clients').set({ status: to, updated_at: now }).where('id', '=', r.id).execute();
    for (const n of await clientStatusConsequences(uow, r.id, r.status, to, now)) nodes.add(n);
    uow.audit({
      action: `client.bulk_${action.type}`,
      entity_type: 'client',
      entity_id: r.id,
      details: { bulk_job_id: jobId, status: { from: r.status, to } },
    });
  }
  return { skipped, nodes: [...nodes], events: [] };
}

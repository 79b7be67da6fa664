import type { Db } from '@svc/db';
import type { Actor } from '../shared/context.ts';
import { newId } from '../shared/ids.ts';

export interface AuditEntry {
  action: string;
  entity_type?: string | null;
  entity_id?: string | null;
  details?: Record<string, unknown> | null;
}

/** An entry a unit of work holds until just before its commit. */
export interface PendingAudit {
  entry: AuditEntry;
  actor: Actor;
  at: Date;
}

/** Writes a unit of work's audit entries in one statement, inside its transaction (UnitOfWork.audit collects them). */
export async function insertAuditEntries(db: Db, pending: readonly PendingAudit[]): Promise<void> {
  if (pending.length === 0) return;
  await db
    .insertInto('audit_log')
    .values(
      pending.map(({ entry, actor, at }) => ({
        id: newId('aud', at.getTime()),
        at,
        actor_type: actor.type,
        actor_id: actor.id,
        action: entry.action,
        entity_type: entry.entity_type ?? null,
        entity_id: entry.entity_id ?? null,
        ip: actor.ip ?? null,
        details: entry.details ? JSON.stringify(entry.details) : null,
        via_token_id: actor.tokenId ?? null,
      })),
    )
    .execute();
}

import type { Db } from '@svc/db';
import type { Clock } from '../shared/clock.ts';
import type { Actor } from '../shared/context.ts';
import { newId } from '../shared/ids.ts';

export interface AuditEntry {
  action: string;
  entity_type?: string | null;
  entity_id?: string | null;
  details?: Record<string, unknown> | null;
}

/** Appends one audit_log row inside the caller's transaction (or alone, for auth failures). */
export async function writeAudit(db: Db, ctx: { clock: Clock; actor: Actor }, entry: AuditEntry): Promise<void> {
  const at = ctx.clock.now();
  await db
    .insertInto('audit_log')
    .values({
      id: newId('aud', at.getTime()),
      at,
      actor_type: ctx.actor.type,
      actor_id: ctx.actor.id,
      action: entry.action,
      entity_type: entry.entity_type ?? null,
      entity_id: entry.entity_id ?? null,
      ip: ctx.actor.ip ?? null,
      details: entry.details ? JSON.stringify(entry.details) : null,
    })
    .execute();
}

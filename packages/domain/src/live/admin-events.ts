import { TOPICS } from '../shared/bus.ts';
import type { DomainDeps } from '../shared/context.ts';

/**
 * What the admin panel hears live (GET /api/v1/events, issue 30.5), on the bus so that every
 * admin-api process of a split installation hears what any gateway replica or API process did:
 * - `nodes`: these nodes' view changed: connectivity (a stream opened or ended), applied
 *   revision, an apply result;
 * - `changed`: records of these entity types were written (every audited write: the audit
 *   entry's entity_type), so lists showing them are stale;
 * - `bulk_job`: a bulk job's progress (after each chunk, and at its end).
 * Only ids and entity types travel: a listener reads the records through the API, with its role.
 */
export type AdminLiveEvent =
  | { type: 'nodes'; ids: string[] }
  | { type: 'changed'; entities: string[] }
  | { type: 'bulk_job'; id: string; status: string; done: number; total: number; skipped: number };

/** How many node ids one message carries (a reconnecting fleet of 10,000 is ten messages). */
const IDS_PER_MESSAGE = 1000;

/** Publishes that these nodes' views changed; a bus failure is logged (the panel also refetches on its own). */
export async function announceNodeViews(deps: Pick<DomainDeps, 'bus' | 'log'>, nodeIds: readonly string[]): Promise<void> {
  for (let i = 0; i < nodeIds.length; i += IDS_PER_MESSAGE) {
    const event: AdminLiveEvent = { type: 'nodes', ids: nodeIds.slice(i, i + IDS_PER_MESSAGE) };
    await deps.bus.publish(TOPICS.adminEvents, event).catch((err) => deps.log.warn({ err }, 'admin live event not published'));
  }
}

/** A message from the bus, checked: anything else (a producer of another release) is ignored. */
export function parseAdminLiveEvent(message: unknown): AdminLiveEvent | null {
  const m = message as Partial<{ type: string; ids: unknown; entities: unknown }> | null;
  const strings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string');
  if (m?.type === 'nodes' && strings(m.ids)) return { type: 'nodes', ids: m.ids as string[] };
  if (m?.type === 'changed' && strings(m.entities)) return { type: 'changed', entities: m.entities as string[] };
  const b = message as Partial<{ id: unknown; status: unknown; done: unknown; total: unknown; skipped: unknown }>;
  const ints = [b?.done, b?.total, b?.skipped].every((n) => Number.isSafeInteger(n));
  if (m?.type === 'bulk_job' && typeof b.id === 'string' && typeof b.status === 'string' && ints)
    return { type: 'bulk_job', id: b.id, status: b.status, done: b.done as number, total: b.total as number, skipped: b.skipped as number };
  return null;
}

import { newId } from '../shared/ids.ts';
import { JOBS } from '../shared/jobs.ts';
import type { UnitOfWork } from '../shared/unit-of-work.ts';
import { type DomainEvent, EVENT_CATALOGUE } from './catalogue.ts';

/** Rows one insert carries (5 parameters each: far below PostgreSQL's 65,535). */
const ROWS_PER_INSERT = 1000;

/**
 * Writes an event into the outbox in the unit's transaction (it exists exactly when the change
 * that caused it committed) and asks the worker to dispatch it after commit; the worker's
 * periodic dispatch picks up an event whose job was lost.
 */
export async function recordEvent(uow: UnitOfWork, event: DomainEvent, now: Date): Promise<string> {
  const [id] = await recordEvents(uow, [event], now);
  return id as string;
}

/** Many events of one unit (a sweep, a bulk action) in as few statements as rows allow; their ids in order. */
export async function recordEvents(uow: UnitOfWork, events: readonly DomainEvent[], now: Date): Promise<string[]> {
  if (events.length === 0) return [];
  const rows = events.map((event) => ({
    id: newId('evt', now.getTime()),
    type: event.type,
    payload: JSON.stringify(EVENT_CATALOGUE[event.type].parse(event.payload)),
    occurred_at: now,
    dispatched_at: null,
  }));
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
    await uow.db
      .insertInto('events')
      .values(rows.slice(i, i + ROWS_PER_INSERT))
      .execute();
  }
  // No job id: BullMQ drops an add() whose id exists in any state, a running dispatch included,
  // which would leave events committed during it to the minutely schedule. A dispatch with
  // nothing to take is one select.
  uow.enqueue(JOBS.eventsDispatch, {});
  return rows.map((r) => r.id);
}

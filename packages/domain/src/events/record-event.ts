import { newId } from '../shared/ids.ts';
import { JOBS } from '../shared/jobs.ts';
import type { UnitOfWork } from '../shared/unit-of-work.ts';
import { type DomainEvent, EVENT_CATALOGUE } from './catalogue.ts';

/**
 * Writes an event into the outbox in the unit's transaction (it exists exactly when the change
 * that caused it committed) and asks the worker to dispatch it after commit; the worker's
 * periodic dispatch picks up an event whose job was lost.
 */
export async function recordEvent(uow: UnitOfWork, event: DomainEvent, now: Date): Promise<string> {
  const payload = EVENT_CATALOGUE[event.type].parse(event.payload);
  const id = newId('evt', now.getTime());
  await uow.db
    .insertInto('events')
    .values({ id, type: event.type, payload: JSON.stringify(payload), occurred_at: now, dispatched_at: null })
    .execute();
  uow.enqueue(JOBS.eventsDispatch, {}, { id: 'events.dispatch' });
  return id;
}

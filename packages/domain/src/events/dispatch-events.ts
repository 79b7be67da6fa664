import type { AdminRole } from '@svc/db';
import { eventMail } from '../notifications/event-mails.ts';
import { queueMailAfterCommit } from '../notifications/queue-mail.ts';
import type { DomainDeps } from '../shared/context.ts';
import { JOBS } from '../shared/jobs.ts';
import { publicBaseUrl } from '../shared/public-url.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { newDelivery } from '../webhooks/webhook-envelope.ts';
import { subscribes } from '../webhooks/webhook-fields.ts';
import { EVENT_VERSION, type EventType } from './catalogue.ts';

const BATCH = 100;

export interface DispatchResult {
  events: number;
  mails: number;
  deliveries: number;
}

/**
 * The `events.dispatch` job (docs/notifications.md): takes undispatched events from the outbox
 * in batches (FOR UPDATE SKIP LOCKED: two workers never take the same one) and, in the
 * batch's transaction, writes one webhook delivery per enabled endpoint subscribed to the
 * type, marks the events dispatched, and leaves a mail per owner (and admin, with
 * notify.email_admins) for the event types in notify.email_events and the delivery jobs for
 * after commit. An event's effects happen once: a crash before commit leaves it undispatched
 * and nothing of it done; a dispatch that runs again finds it marked. (A queue that loses the
 * after-commit jobs loses those mails; deliveries are rows, and the webhook sweep finds them.)
 */
export async function dispatchEvents(deps: Pick<DomainDeps, 'db' | 'clock' | 'log' | 'bus' | 'jobs' | 'config'>): Promise<DispatchResult> {
  const total: DispatchResult = { events: 0, mails: 0, deliveries: 0 };
  for (;;) {
    const batch = await unitOfWork(deps, async (uow) => {
      const events = await uow.db
        .selectFrom('events')
        .selectAll()
        .where('dispatched_at', 'is', null)
        .orderBy('id')
        .limit(BATCH)
        .forUpdate()
        .skipLocked()
        .execute();
      const done: DispatchResult = { events: events.length, mails: 0, deliveries: 0 };
      if (events.length === 0) return done;
      const now = deps.clock.now();

      const mailed = new Set(deps.config.notify.email_events);
      const roles: AdminRole[] = deps.config.notify.email_admins ? ['owner', 'admin'] : ['owner'];
      const recipients = events.some((e) => mailed.has(e.type))
        ? await uow.db.selectFrom('admins').select('email').where('role', 'in', roles).orderBy('id').execute()
        : [];
      const endpoints = await uow.db.selectFrom('webhook_endpoints').select(['id', 'event_types']).where('enabled', '=', true).execute();
      const baseUrl = publicBaseUrl(deps.config);

      const deliveries = [];
      for (const e of events) {
        const payload = (typeof e.payload === 'string' ? JSON.parse(e.payload) : e.payload) as Record<string, unknown>;
        if (mailed.has(e.type)) {
          for (const { email } of recipients) {
            queueMailAfterCommit(uow, eventMail({ ...e, payload }, email, baseUrl));
            done.mails++;
          }
        }
        const envelope = {
          id: e.id,
          type: e.type,
          version: EVENT_VERSION[e.type as EventType] ?? 1,
          occurred_at: e.occurred_at.toISOString(),
          data: payload,
        };
        for (const endpoint of endpoints) {
          if (subscribes(endpoint.event_types, e.type)) deliveries.push(newDelivery(endpoint.id, envelope, now));
        }
      }
      if (deliveries.length > 0) {
        const inserted = await uow.db
          .insertInto('webhook_deliveries')
          .values(deliveries)
          .onConflict((oc) => oc.columns(['endpoint_id', 'event_id']).doNothing())
          .returning('id')
          .execute();
        for (const { id } of inserted) uow.enqueue(JOBS.webhooksDeliver, { id });
        done.deliveries = inserted.length;
      }
      await uow.db
        .updateTable('events')
        .set({ dispatched_at: now })
        .where(
          'id',
          'in',
          events.map((e) => e.id),
        )
        .execute();
      return done;
    });
    total.events += batch.events;
    total.mails += batch.mails;
    total.deliveries += batch.deliveries;
    if (batch.events < BATCH) return total;
  }
}

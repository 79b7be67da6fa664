import type { WebhookDeliveriesTable } from '@svc/db';
import type { Insertable } from 'kysely';
import { newId } from '../shared/ids.ts';

/**
 * What a receiver gets (docs/notifications.md): one JSON object per delivery, the same bytes
 * on every attempt. `id` is the event's (a receiver that saw it already can skip it: deliveries
 * are at least once); `data` is the event's payload as the catalogue describes it.
 */
export interface WebhookEnvelope {
  id: string;
  type: string;
  /** The payload's version (EVENT_VERSION): a receiver reads `data` by type and version. */
  version: number;
  occurred_at: string;
  data: Record<string, unknown>;
}

/** The ping POST /webhooks/{id}/test sends; not in the catalogue (no endpoint subscribes to it, each gets its own). */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

export const envelopeBody = (e: WebhookEnvelope): string =>
  JSON.stringify({ id: e.id, type: e.type, version: e.version, occurred_at: e.occurred_at, data: e.data });

/** A new delivery of `envelope` to one endpoint, due now. */
export function newDelivery(endpointId: string, envelope: WebhookEnvelope, now: Date): Insertable<WebhookDeliveriesTable> {
  return {
    id: newId('whd', now.getTime()),
    endpoint_id: endpointId,
    event_id: envelope.id,
    event_type: envelope.type,
    body: envelopeBody(envelope),
    status: 'pending',
    attempts: 0,
    last_response_status: null,
    last_error: null,
    next_attempt_at: now,
    delivered_at: null,
    created_at: now,
    updated_at: now,
  };
}

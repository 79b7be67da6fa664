import type { ColumnType, Generated, Selectable } from 'kysely';

/** An outbound webhook endpoint (docs/notifications.md). */
export interface WebhookEndpointsTable {
  id: string;
  url: string;
  description: Generated<string>;
  /** null: every event type. */
  event_types: ColumnType<string[] | null, string | null, string | null>;
  enabled: Generated<boolean>;
  /** The signing secret, sealed (deps.secrets). */
  secret_enc: string;
  created_at: Date;
  updated_at: Date;
}
export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** One event for one endpoint: attempts until a 2xx, or failed after the last one. */
export interface WebhookDeliveriesTable {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  body: string;
  status: WebhookDeliveryStatus;
  attempts: Generated<number>;
  last_response_status: number | null;
  last_error: string | null;
  /** When the next attempt is due (pending), null once it succeeded or failed for good. */
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  created_at: Date;
  updated_at: Date;
}
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;

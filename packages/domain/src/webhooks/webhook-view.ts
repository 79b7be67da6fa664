import { randomBytes } from 'node:crypto';
import type { WebhookDeliveryRow, WebhookEndpointRow } from '@svc/db';

/** An endpoint as the admin API shows it: never its secret. */
export interface WebhookView {
  id: string;
  url: string;
  description: string;
  /** null: every event type. */
  event_types: string[] | null;
  enabled: boolean;
  created_at: string;
  updated_at: string;
}

export const webhookView = (r: WebhookEndpointRow): WebhookView => ({
  id: r.id,
  url: r.url,
  description: r.description,
  event_types: r.event_types,
  enabled: r.enabled,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

/** The create (and rotate-secret) answer: the only time the secret is shown. */
export interface WebhookWithSecret extends WebhookView {
  secret: string;
}

/** `whsec_` + 32 random bytes (base64url): the HMAC key of the signatures. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64url')}`;

export interface WebhookDeliveryView {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  last_response_status: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string;
  updated_at: string;
}

export const webhookDeliveryView = (r: WebhookDeliveryRow): WebhookDeliveryView => ({
  id: r.id,
  webhook_id: r.endpoint_id,
  event_id: r.event_id,
  event_type: r.event_type,
  status: r.status,
  attempts: r.attempts,
  last_response_status: r.last_response_status,
  last_error: r.last_error,
  next_attempt_at: r.status === 'pending' && r.next_attempt_at ? r.next_attempt_at.toISOString() : null,
  delivered_at: r.delivered_at?.toISOString() ?? null,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

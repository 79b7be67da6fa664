import { randomBytes } from 'node:crypto';
import type { WebhookDeliveryRow, WebhookEndpointRow } from '@svc/db';
import type { Actor } from '../shared/context.ts';
import { mayReadLinks } from '../subscriptions/subscription-view.ts';
import { auditableUrl } from './webhook-fields.ts';

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

/**
 * Who reads a webhook whole: its URL with the query (many receivers keep their secret there)
 * and the receivers' answers. The rule of subscription links (mayReadLinks), because it is the
 * same question: whoever could change the thing (owners, admins, the shell) may read what
 * grants access through it; a viewer reads that it exists and how it fares.
 */
export const mayReadWebhookSecrets = (actor: Actor): boolean => mayReadLinks(actor);

/** The endpoint whole: what writes answer (only owners and admins write). Reads go through webhookReadView. */
export const webhookView = (r: WebhookEndpointRow): WebhookView => endpointView(r, r.url);

/**
 * The endpoint a read answers to this actor: a viewer gets the URL the audit log keeps
 * (auditableUrl: origin and path, a query shown as `?…`).
 */
export const webhookReadView = (actor: Actor, r: WebhookEndpointRow): WebhookView =>
  endpointView(r, mayReadWebhookSecrets(actor) ? r.url : auditableUrl(r.url));

const endpointView = (r: WebhookEndpointRow, url: string): WebhookView => ({
  id: r.id,
  url,
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

/** What a viewer reads of a failed attempt in place of last_error. */
export const WEBHOOK_ERROR_HIDDEN = 'not delivered';

/**
 * A failed attempt as a viewer reads it: the receiver's status and nothing it said (an excerpt
 * may echo a token, or an internal service's page), nor our connection-level detail (it maps
 * addresses and ports); both are kept whole for owners and admins.
 */
const viewerError = (r: WebhookDeliveryRow): string | null =>
  r.last_error === null ? null : r.last_response_status !== null ? `HTTP ${r.last_response_status}` : WEBHOOK_ERROR_HIDDEN;

/** The delivery whole: what writes answer (POST /webhooks/{id}/test). Reads go through webhookDeliveryReadView. */
export const webhookDeliveryView = (r: WebhookDeliveryRow): WebhookDeliveryView => deliveryView(r, r.last_error);

/** The delivery a read answers to this actor: a viewer gets viewerError in place of last_error. */
export const webhookDeliveryReadView = (actor: Actor, r: WebhookDeliveryRow): WebhookDeliveryView =>
  deliveryView(r, mayReadWebhookSecrets(actor) ? r.last_error : viewerError(r));

const deliveryView = (r: WebhookDeliveryRow, lastError: string | null): WebhookDeliveryView => ({
  id: r.id,
  webhook_id: r.endpoint_id,
  event_id: r.event_id,
  event_type: r.event_type,
  status: r.status,
  attempts: r.attempts,
  last_response_status: r.last_response_status,
  last_error: lastError,
  next_attempt_at: r.status === 'pending' && r.next_attempt_at ? r.next_attempt_at.toISOString() : null,
  delivered_at: r.delivered_at?.toISOString() ?? null,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

import { z } from 'zod';
import { ADMIN_EVENTS } from './catalogue/admins.ts';
import { CERTIFICATE_EVENTS } from './catalogue/certificates.ts';
import { CLIENT_EVENTS } from './catalogue/clients.ts';
import { NODE_EVENTS } from './catalogue/nodes.ts';
import { PAYMENT_EVENTS } from './catalogue/payments.ts';
import { SUBSCRIPTION_EVENTS } from './catalogue/subscriptions.ts';

/**
 * The domain events an operator can be told about (docs/events.md), one zod schema each: the
 * payload a webhook receives under `data` and a notification mail is written from, its
 * description in the schema's meta (the docs and the OpenAPI document's `webhooks` section are
 * generated from here). Each is emitted where the change is made, in the change's unit of work.
 * Payloads carry ids and what a receiver needs to act, never secrets.
 */
export const EVENT_CATALOGUE = {
  ...SUBSCRIPTION_EVENTS,
  ...CLIENT_EVENTS,
  ...NODE_EVENTS,
  ...CERTIFICATE_EVENTS,
  ...PAYMENT_EVENTS,
  ...ADMIN_EVENTS,
} as const;

export type EventType = keyof typeof EVENT_CATALOGUE;
export type EventPayload<T extends EventType> = z.output<(typeof EVENT_CATALOGUE)[T]>;
export type DomainEvent = { [T in EventType]: { type: T; payload: EventPayload<T> } }[EventType];

export const EVENT_TYPES = Object.keys(EVENT_CATALOGUE) as EventType[];

/**
 * The version of every payload (the envelope's `version`): a field added keeps it, a field
 * removed, renamed or changed in meaning makes it 2 (and the old shape is kept alongside for a
 * release). All are 1 today.
 */
export const EVENT_VERSION: Record<EventType, number> = Object.fromEntries(EVENT_TYPES.map((t) => [t, 1])) as Record<EventType, number>;

/** The event's description, as the catalogue writes it. */
export const eventDescription = (type: EventType): string => (z.globalRegistry.get(EVENT_CATALOGUE[type])?.description as string) ?? '';

/** The JSON Schema (draft 2020-12) of an event's `data`, for docs and the OpenAPI document. */
export const eventDataJsonSchema = (type: EventType): Record<string, unknown> =>
  z.toJSONSchema(EVENT_CATALOGUE[type], { target: 'draft-2020-12', io: 'output' }) as Record<string, unknown>;

import { z } from 'zod';

/**
 * The domain events an operator can be told about (spec 6), one schema each: the payload a
 * webhook receives under `data` and a notification mail is written from. `client.registered`
 * is the spec's; the rest of the catalogue (user created/limited/expired, node offline,
 * payments ...) is added here, one entry per event, and emitted where the change is made.
 * Payloads carry ids and what a receiver needs to act, never secrets.
 */
export const EVENT_CATALOGUE = {
  /**
   * A customer registered on the portal, in either mode: application (status pending, waits for
   * approval) or open (active at once). Whatever the method: password or OAuth.
   */
  'client.registered': z.object({
    client_id: z.string(),
    email: z.string(),
    status: z.enum(['pending', 'active']),
    /** How they registered: password or oauth:<provider>. */
    method: z.string(),
    registration_mode: z.enum(['application', 'open']),
  }),
  /**
   * A node's agent reports a version older than this release's minor (the node view's
   * `outdated_agent`): still served, to be upgraded before the next release. Once per version a
   * node reports, at Enroll or when a stream opens with it.
   */
  'node.agent_outdated': z.object({
    node_id: z.string(),
    name: z.string(),
    agent_version: z.string(),
    previous_agent_version: z.string().nullable(),
    /** The svc-agent release this control plane ships with. */
    release: z.string(),
  }),
  /**
   * A node's agent could not apply a desired state (the engine refused the configuration, or it
   * did not start): the node keeps serving its last applied revision, so changes since then
   * (a new inbound, users added or removed) are not in force on it. Once per failed revision,
   * not on every repeat of the same failure.
   */
  'node.apply_failed': z.object({
    node_id: z.string(),
    name: z.string(),
    revision: z.number().int(),
    /** The revision the node still runs. */
    applied_revision: z.number().int(),
    /** The agent's error text, the engine's words (its last 4,000 characters). */
    error: z.string(),
    /** When this run of failures began (the first failure after the last successful apply). */
    failing_since: z.string(),
  }),
  /**
   * An agent upgrade asked from the panel (POST /api/v1/nodes/{id}/upgrade-agent) did not happen:
   * the download, its checksum or the new file failed, or the new agent did not reach the control
   * plane and the old one was put back. The node runs its old agent, serving as before.
   */
  'node.agent_upgrade_failed': z.object({
    node_id: z.string(),
    name: z.string(),
    /** The release asked for. */
    version: z.string(),
    /** The agent that runs (and said so). */
    agent_version: z.string(),
    /** The agent's words (their first 1,000 characters). */
    error: z.string(),
  }),
  /** A node that had failed to apply applied a revision at or past the failed one: it runs its desired state again. */
  'node.apply_recovered': z.object({
    node_id: z.string(),
    name: z.string(),
    revision: z.number().int(),
    failed_revision: z.number().int(),
    failing_since: z.string(),
  }),
  /** An uploaded certificate expires within 14 days (once per certificate material). */
  'certificate.expiring': z.object({
    certificate_id: z.string(),
    name: z.string().nullable(),
    domains: z.array(z.string()),
    not_after: z.string(),
    days_left: z.number().int(),
  }),
  /** An ACME certificate was issued or renewed; the nodes serving it get the new material. */
  'certificate.issued': z.object({
    certificate_id: z.string(),
    name: z.string().nullable(),
    domains: z.array(z.string()),
    not_after: z.string(),
    renewal: z.boolean(),
  }),
  /** An ACME issuance or renewal failed; tried again after a backoff. A failed renewal leaves the old material serving until serving_until. */
  'certificate.issue_failed': z.object({
    certificate_id: z.string(),
    name: z.string().nullable(),
    domains: z.array(z.string()),
    error: z.string(),
    failed_attempts: z.number().int(),
    serving_until: z.string().nullable(),
  }),
  /**
   * A customer checked out through a manual provider (bank transfer, cash): nothing but an admin
   * will ever settle it. Confirm when the money arrived (or cancel) before `expires_at`, when it
   * expires unconfirmed (billing.manual_max_days after the checkout).
   */
  'payment.awaiting_confirmation': z.object({
    payment_id: z.string(),
    client_id: z.string(),
    client_email: z.string(),
    plan_id: z.string(),
    plan_name: z.string(),
    provider_id: z.string(),
    provider_name: z.string(),
    /** The subscription it extends; null: a new one when confirmed. */
    subscription_id: z.string().nullable(),
    amount: z.number().int(),
    currency: z.string(),
    expires_at: z.string(),
  }),
  /** A payment succeeded and its plan was applied (a subscription created or extended). */
  'payment.succeeded': z.object({
    payment_id: z.string(),
    client_id: z.string(),
    plan_id: z.string(),
    provider_id: z.string(),
    subscription_id: z.string().nullable(),
    amount: z.number().int(),
    currency: z.string(),
  }),
  /** A payment was refunded; the time it bought was taken back (docs/payments.md, "Refunds"). */
  'payment.refunded': z.object({
    payment_id: z.string(),
    client_id: z.string(),
    subscription_id: z.string().nullable(),
    amount: z.number().int(),
    currency: z.string(),
  }),
} as const;

export type EventType = keyof typeof EVENT_CATALOGUE;
export type EventPayload<T extends EventType> = z.output<(typeof EVENT_CATALOGUE)[T]>;
export type DomainEvent = { [T in EventType]: { type: T; payload: EventPayload<T> } }[EventType];

export const EVENT_TYPES = Object.keys(EVENT_CATALOGUE) as EventType[];

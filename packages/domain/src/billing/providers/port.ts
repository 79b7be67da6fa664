import type { OutboundPort } from '../../shared/outbound.ts';

/**
 * The payment-provider port: what checkout, the webhook ingress and the worker ask of a
 * provider, whatever its kind. Each kind (stripe, cryptobot, yookassa, manual) implements it
 * in its own adapter (@svc/providers, a vendor client outside the domain); the runtime hands
 * the domain a PaymentAdapterFactory (DomainDeps.vendors) that builds one from a stored provider.
 *
 * Amounts are integers in minor units of an ISO 4217 currency (upper case), as in `payments`.
 */

/** Our view of a payment's state at a provider. */
export type ProviderPaymentStatus = 'pending' | 'succeeded' | 'failed' | 'expired' | 'refunded' | 'canceled';

export const PROVIDER_PAYMENT_STATUSES: readonly ProviderPaymentStatus[] = [
  'pending',
  'succeeded',
  'failed',
  'expired',
  'refunded',
  'canceled',
];

/** Each outbound call to a provider is abandoned after this long (TimeoutError). */
export const PROVIDER_CALL_TIMEOUT_MS = 10_000;
/** A webhook body larger than this is refused before it is parsed. */
export const WEBHOOK_MAX_BYTES = 256 * 1024;
/** An answer of a provider's API larger than this is treated as broken (UnavailableError). */
export const PROVIDER_ANSWER_MAX_BYTES = 1024 * 1024;

export interface CheckoutRequest {
  /** Our payment id: carried to the provider (metadata / payload) so webhooks and re-reads map back. */
  payment_id: string;
  /** Minor units, > 0. */
  amount: number;
  /** ISO 4217, upper case. */
  currency: string;
  /** Shown to the payer (the plan's name). */
  description: string;
  client_email?: string | undefined;
  success_url: string;
  cancel_url: string;
  /** Sent to providers that support one (Stripe Idempotency-Key, YooKassa Idempotence-Key). */
  idempotency_key: string;
}

export interface CheckoutResult {
  /** The provider's id of the checkout (Stripe session, CryptoBot invoice, YooKassa payment). */
  provider_payment_id: string;
  /** Where the payer goes; null for kinds without a hosted page (manual). */
  checkout_url: string | null;
  /** What the payer is told to do when there is no URL (manual). */
  instructions?: string | undefined;
  /** ISO timestamp after which the provider will not take the payment, when it says. */
  expires_at?: string | undefined;
}

/** A payment as a provider reports it (a verified webhook or a re-read). */
export interface ProviderPaymentState {
  provider_payment_id: string;
  /** Our payment id, when the provider carried it back. */
  payment_id?: string | undefined;
  status: ProviderPaymentStatus;
  /** Minor units. */
  amount?: number | undefined;
  currency?: string | undefined;
  /** ISO timestamp of the change, when the provider says. */
  occurred_at?: string | undefined;
}

/** A verified webhook about a payment. `event_id` is unique per provider: store it once. */
export interface PaymentWebhookEvent extends ProviderPaymentState {
  type: 'payment';
  event_id: string;
}

/**
 * A verified webhook that says nothing about a payment of ours (another event type the
 * endpoint was subscribed to): answer 2xx so the provider stops sending it, store nothing.
 */
export interface IgnoredWebhookEvent {
  type: 'ignored';
  event_id: string;
  reason: string;
}

export type VerifiedWebhook = PaymentWebhookEvent | IgnoredWebhookEvent;

/** Header names in lower case (node's IncomingHttpHeaders, or a Headers object). */
export type WebhookHeaders = Readonly<Record<string, string | string[] | undefined>> | Headers;

export interface WebhookRequest {
  rawBody: Buffer;
  headers: WebhookHeaders;
  /** The address the request came from, as the ingress determined it (v4, v6 or v4-mapped v6). */
  sourceIp: string;
}

export interface PaymentProviderPort {
  readonly kind: string;
  /** False for kinds that never call back (manual): the ingress answers 404. */
  readonly acceptsWebhooks: boolean;
  /** False for kinds whose state no API can tell (manual): the worker does not re-read them. */
  readonly canFetchPayment: boolean;
  /** Creates the provider's checkout. Throws ValidationError (bad request), UnavailableError, TimeoutError. */
  createCheckout(req: CheckoutRequest): Promise<CheckoutResult>;
  /**
   * Verifies and parses a webhook. Throws WebhookRefusedError (type validation: 400, store
   * nothing) on any bad input, UnavailableError/TimeoutError when a re-read it needs fails.
   */
  verifyWebhook(req: WebhookRequest): Promise<VerifiedWebhook>;
  /** The provider's state name -> ours (null: a state we do not know; leave the payment as it is). */
  mapStatus(providerState: string): ProviderPaymentStatus | null;
  /** Re-reads a payment from the provider's API. NotFoundError when the provider does not know it. */
  fetchPayment(providerPaymentId: string): Promise<ProviderPaymentState>;
}

/** What adapters take from their caller besides the provider's settings. */
export interface ProviderAdapterDeps {
  /**
   * Every call to the provider's API goes through the outbound client (the destination policy
   * applies to billing.api_base_urls too). Without it an adapter can be made (webhook checks) but
   * refuses to call out: there is no other way out.
   */
  outbound?: Pick<OutboundPort, 'request' | 'fetch'> | undefined;
  /** The provider API's base URL (tests point it at a local stand-in); default: the provider's. */
  baseUrl?: string | undefined;
  /** Per outbound call; default PROVIDER_CALL_TIMEOUT_MS. */
  timeoutMs?: number | undefined;
  /** The clock used for webhook timestamp tolerance; default Date.now. */
  now?: (() => Date) | undefined;
}

/**
 * Builds the port of a stored provider from its kind, public config and opened secrets
 * (@svc/providers `paymentProviderAdapter`). A provider missing a setting its adapter needs is
 * not usable: UnavailableError naming the setting, never its value; an unknown kind is a
 * ValidationError.
 */
export type PaymentAdapterFactory = (
  kind: string,
  config: Readonly<Record<string, unknown>>,
  secrets: Readonly<Record<string, string>>,
  deps?: ProviderAdapterDeps,
) => PaymentProviderPort;

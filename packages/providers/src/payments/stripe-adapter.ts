import {
  assertMoney,
  type CheckoutRequest,
  type CheckoutResult,
  callFailure,
  type DomainError,
  NotFoundError,
  type PaymentProviderPort,
  PROVIDER_ANSWER_MAX_BYTES,
  PROVIDER_CALL_TIMEOUT_MS,
  type ProviderAdapterDeps,
  type ProviderPaymentState,
  providerSays,
  refusedByProvider,
  UnavailableError,
  type VerifiedWebhook,
  WebhookRefusedError,
  type WebhookRequest,
} from '@svc/domain';
import Stripe from 'stripe';
import { providerIdempotencyKey } from './idempotency.ts';
import { outboundOf } from './provider-http.ts';
import { STRIPE_SIGNATURE_TOLERANCE_SECONDS, stripeTimestampRefusal } from './stripe-signature-time.ts';
import { STRIPE_EVENT_STATES, stripeMapStatus, stripeSessionState } from './stripe-status.ts';
import { boundedBody, headerValue, isoTime, isRecord, textField } from './webhook-input.ts';

export interface StripeSettings {
  secret_key: string;
  webhook_secret: string;
}

const SESSION_ID = /^cs_[A-Za-z0-9_]{1,250}$/;
const NAME = 'Stripe';

/**
 * Stripe through the official `stripe` package: a Checkout Session (mode payment, the price
 * inline, our payment id in metadata, client_reference_id and the payment intent's metadata)
 * created with the Idempotency-Key; webhooks verified by `stripe.webhooks.constructEvent`
 * (HMAC of the raw body under the endpoint secret), its timestamp within 300 s of our clock either
 * way (stripeTimestampRefusal: the package bounds only the past); re-reads of the
 * session with its payment intent and latest charge expanded.
 */
export function stripeAdapter(settings: StripeSettings, deps: ProviderAdapterDeps = {}): PaymentProviderPort {
  const secrets = [settings.secret_key, settings.webhook_secret];
  const timeout = deps.timeoutMs ?? PROVIDER_CALL_TIMEOUT_MS;
  const stripe = new Stripe(settings.secret_key, {
    timeout,
    // Through the outbound client (the destination policy); Stripe's own time limit comes first.
    httpClient: Stripe.createFetchHttpClient((input, init) =>
      outboundOf(NAME, deps.outbound).fetch({ timeoutMs: timeout + 5_000, maxBytes: PROVIDER_ANSWER_MAX_BYTES })(input, init),
    ),
    // A retry would double the wait past the time limit; the caller (checkout with its
    // Idempotency-Key, the worker's re-read) tries again instead.
    maxNetworkRetries: 0,
    telemetry: false,
    ...apiAddress(deps.baseUrl),
  });
  const fail = (step: string, err: unknown) => stripeFailure(step, err, secrets);

  async function sessionOfIntent(paymentIntent: string): Promise<Record<string, unknown> | undefined> {
    try {
      const list = await stripe.checkout.sessions.list({ payment_intent: paymentIntent, limit: 1 });
      const first = list.data[0] as unknown;
      return isRecord(first) ? first : undefined;
    } catch (err) {
      throw fail('find the session of a refunded charge', err);
    }
  }

  return {
    kind: 'stripe',
    acceptsWebhooks: true,
    canFetchPayment: true,
    mapStatus: stripeMapStatus,

    async createCheckout(req: CheckoutRequest): Promise<CheckoutResult> {
      assertMoney(req.amount, req.currency);
      let session: Stripe.Checkout.Session;
      try {
        session = await stripe.checkout.sessions.create(
          {
            mode: 'payment',
            line_items: [
              {
                quantity: 1,
                price_data: { currency: req.currency.toLowerCase(), unit_amount: req.amount, product_data: { name: req.description } },
              },
            ],
            success_url: req.success_url,
            cancel_url: req.cancel_url,
            client_reference_id: req.payment_id,
            metadata: { payment_id: req.payment_id },
            payment_intent_data: { metadata: { payment_id: req.payment_id } },
            ...(req.client_email ? { customer_email: req.client_email } : {}),
          },
          { idempotencyKey: providerIdempotencyKey(req.idempotency_key, 255) },
        );
      } catch (err) {
        throw fail('create checkout session', err);
      }
      if (typeof session.url !== 'string' || typeof session.id !== 'string') {
        throw new UnavailableError('Stripe created a checkout session without a URL', 30);
      }
      return { provider_payment_id: session.id, checkout_url: session.url, expires_at: isoTime(session.expires_at) };
    },

    async verifyWebhook(req: WebhookRequest): Promise<VerifiedWebhook> {
      const body = boundedBody(NAME, req.rawBody);
      const signature = headerValue(req.headers, 'stripe-signature');
      if (!signature || signature.length > 2048) throw new WebhookRefusedError(NAME, 'missing-signature', 'no Stripe-Signature header');
      let event: unknown;
      try {
        event = stripe.webhooks.constructEvent(
          body,
          signature,
          settings.webhook_secret,
          STRIPE_SIGNATURE_TOLERANCE_SECONDS,
          undefined,
          deps.now?.().getTime(),
        );
      } catch (err) {
        const e = err as { type?: string; message?: string };
        if (e?.type !== 'StripeSignatureVerificationError')
          throw new WebhookRefusedError(NAME, 'malformed', 'the body is not a JSON event');
        throw /tolerance/i.test(e.message ?? '')
          ? new WebhookRefusedError(NAME, 'stale', `the signature timestamp is older than ${STRIPE_SIGNATURE_TOLERANCE_SECONDS} s`)
          : new WebhookRefusedError(NAME, 'bad-signature', 'the Stripe-Signature does not match the body');
      }
      const skewed = stripeTimestampRefusal(signature, deps.now?.() ?? new Date(), NAME);
      if (skewed) throw skewed;
      return stripeEvent(event, sessionOfIntent);
    },

    async fetchPayment(providerPaymentId: string): Promise<ProviderPaymentState> {
      if (!SESSION_ID.test(providerPaymentId)) throw new NotFoundError('Stripe checkout session', providerPaymentId.slice(0, 80));
      let session: unknown;
      try {
        session = await stripe.checkout.sessions.retrieve(providerPaymentId, { expand: ['payment_intent.latest_charge'] });
      } catch (err) {
        throw fail('read checkout session', err);
      }
      if (!isRecord(session)) throw new UnavailableError('Stripe answered with something that is not a session', 30);
      const status = stripeMapStatus(stripeSessionState(session)) ?? 'pending';
      return { ...sessionFields(session), status };
    },
  };
}

/** The fields of a session event every state shares. */
function sessionFields(s: Record<string, unknown>) {
  const metadata = isRecord(s.metadata) ? s.metadata : {};
  const amount = s.amount_total;
  const currency = textField(s, 'currency', 3);
  return {
    provider_payment_id: textField(s, 'id') ?? '',
    payment_id: textField(metadata, 'payment_id') ?? textField(s, 'client_reference_id'),
    amount: typeof amount === 'number' && Number.isSafeInteger(amount) ? amount : undefined,
    currency: currency?.toUpperCase(),
  };
}

/** A verified event -> ours. The signature proved it came from Stripe; its shape is still checked. */
async function stripeEvent(
  event: unknown,
  sessionOfIntent: (paymentIntent: string) => Promise<Record<string, unknown> | undefined>,
): Promise<VerifiedWebhook> {
  const eventId = textField(event, 'id');
  const type = textField(event, 'type');
  const data = isRecord(event) && isRecord(event.data) ? event.data : undefined;
  const object = data && isRecord(data.object) ? data.object : undefined;
  if (!eventId || !type || !object) throw new WebhookRefusedError(NAME, 'malformed', 'the event has no id, type or object');
  const occurred_at = isoTime(isRecord(event) ? event.created : undefined);
  const toState = Object.hasOwn(STRIPE_EVENT_STATES, type) ? STRIPE_EVENT_STATES[type] : undefined;
  if (toState) {
    const fields = sessionFields(object);
    if (!fields.provider_payment_id) throw new WebhookRefusedError(NAME, 'malformed', 'the session has no id');
    const status = stripeMapStatus(toState(object));
    if (!status) return { type: 'ignored', event_id: eventId, reason: `unknown session state of ${type}` };
    return { type: 'payment', event_id: eventId, status, occurred_at, ...fields };
  }
  if (type === 'charge.refunded') {
    // A partial refund leaves the payment paid: only a full refund is a state of ours.
    if (object.refunded !== true) return { type: 'ignored', event_id: eventId, reason: 'partial refund' };
    const intent = textField(object, 'payment_intent');
    if (!intent) return { type: 'ignored', event_id: eventId, reason: 'a charge outside Checkout' };
    const session = await sessionOfIntent(intent);
    if (!session) return { type: 'ignored', event_id: eventId, reason: 'a charge outside Checkout' };
    return { type: 'payment', event_id: eventId, status: 'refunded', occurred_at, ...sessionFields(session) };
  }
  return { type: 'ignored', event_id: eventId, reason: `event type ${type.slice(0, 80)} is not about a checkout` };
}

function apiAddress(baseUrl: string | undefined): { host?: string; port?: number; protocol?: 'http' | 'https' } {
  if (!baseUrl) return {};
  const url = new URL(baseUrl);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return { host: url.hostname, port: Number(url.port || (protocol === 'http' ? 80 : 443)), protocol };
}

/** A failure of the `stripe` package -> ours, naming Stripe's error code, never its message. */
function stripeFailure(step: string, err: unknown, secrets: readonly string[]): DomainError {
  const e = err as { type?: string; statusCode?: number; code?: string; detail?: { code?: string } };
  if (e?.type === 'StripeConnectionError') {
    return callFailure(NAME, step, e.detail?.code === 'ETIMEDOUT' ? { code: 'ETIMEDOUT' } : (e.detail ?? err), secrets);
  }
  if (e?.statusCode === 404) return new NotFoundError('Stripe checkout session');
  if (typeof e?.statusCode === 'number') return refusedByProvider(NAME, step, e.statusCode, providerSays(e.code), secrets);
  return callFailure(NAME, step, err, secrets);
}

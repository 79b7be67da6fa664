import {
  assertMoney,
  type CheckoutRequest,
  type CheckoutResult,
  decimalToMinor,
  isDomainError,
  minorToDecimal,
  NotFoundError,
  type PaymentProviderPort,
  type ProviderAdapterDeps,
  type ProviderPaymentState,
  UnavailableError,
  type VerifiedWebhook,
  WebhookRefusedError,
  type WebhookRequest,
  yookassaSourceMatcher,
} from '@svc/domain';
import { providerIdempotencyKey } from './idempotency.ts';
import { callProvider } from './provider-http.ts';
import { boundedBody, isoTime, isRecord, jsonObjectBody, textField } from './webhook-input.ts';
import { yookassaMapStatus, yookassaPaymentState } from './yookassa-status.ts';

export const YOOKASSA_API = 'https://api.yookassa.ru/v3';

export interface YookassaSettings {
  shop_id: string;
  secret_key: string;
  /** Addresses and CIDR ranges notifications may come from; default YooKassa's published ones; `any` turns the check off. */
  allowed_source_cidrs?: string | undefined;
}

const NAME = 'YooKassa';
const PAYMENT_ID = /^[A-Za-z0-9-]{1,64}$/;
/** YooKassa's limits: Idempotence-Key up to 64 characters, description up to 128. */
const KEY_MAX = 64;
const DESCRIPTION_MAX = 128;

/**
 * YooKassa API v3: a payment (capture true, redirect confirmation, our payment id in metadata)
 * created with Basic auth and the Idempotence-Key. Its notifications are not signed: the
 * sender's address is checked against an allow-list, and nothing in the body is believed: the
 * payment it names is re-read from the API, and the event carries the re-read's state.
 */
export function yookassaAdapter(settings: YookassaSettings, deps: ProviderAdapterDeps = {}): PaymentProviderPort {
  const base = (deps.baseUrl ?? YOOKASSA_API).replace(/\/+$/, '');
  const secrets = [settings.secret_key, Buffer.from(`${settings.shop_id}:${settings.secret_key}`).toString('base64')];
  const authorization = `Basic ${Buffer.from(`${settings.shop_id}:${settings.secret_key}`).toString('base64')}`;
  const sourceAllowed = yookassaSourceMatcher(settings.allowed_source_cidrs);
  const errorText = (b: unknown) => {
    const code = textField(b, 'code', 60);
    const parameter = textField(b, 'parameter', 60);
    return code ? `${code}${parameter ? ` (${parameter})` : ''}` : undefined;
  };

  async function fetchPayment(providerPaymentId: string): Promise<ProviderPaymentState> {
    if (!PAYMENT_ID.test(providerPaymentId)) throw new NotFoundError('YooKassa payment', providerPaymentId.slice(0, 80));
    const { body } = await callProvider(deps.outbound, {
      provider: NAME,
      step: 'read payment',
      method: 'GET',
      url: `${base}/payments/${encodeURIComponent(providerPaymentId)}`,
      headers: { authorization },
      timeoutMs: deps.timeoutMs,
      secrets,
      errorText,
      notFoundIsMissing: true,
    });
    const state = paymentState(body);
    if (!state || state.provider_payment_id !== providerPaymentId) {
      throw new UnavailableError('YooKassa answered with something that is not the payment asked for', 30);
    }
    return state;
  }

  return {
    kind: 'yookassa',
    acceptsWebhooks: true,
    canFetchPayment: true,
    mapStatus: yookassaMapStatus,
    fetchPayment,

    async createCheckout(req: CheckoutRequest): Promise<CheckoutResult> {
      assertMoney(req.amount, req.currency);
      const { body } = await callProvider(deps.outbound, {
        provider: NAME,
        step: 'create payment',
        method: 'POST',
        url: `${base}/payments`,
        headers: { authorization, 'idempotence-key': providerIdempotencyKey(req.idempotency_key, KEY_MAX) },
        json: {
          amount: { value: minorToDecimal(req.amount, req.currency), currency: req.currency },
          capture: true,
          confirmation: { type: 'redirect', return_url: req.success_url },
          description: req.description.slice(0, DESCRIPTION_MAX),
          metadata: { payment_id: req.payment_id },
        },
        timeoutMs: deps.timeoutMs,
        secrets,
        errorText,
      });
      const id = textField(body, 'id', 64);
      const confirmation = isRecord(body) && isRecord(body.confirmation) ? body.confirmation : undefined;
      const url = textField(confirmation, 'confirmation_url', 2048);
      if (!id || !url) throw new UnavailableError('YooKassa created a payment without an id or a confirmation URL', 30);
      return { provider_payment_id: id, checkout_url: url, expires_at: isoTime(isRecord(body) ? body.expires_at : undefined) };
    },

    async verifyWebhook(req: WebhookRequest): Promise<VerifiedWebhook> {
      const raw = boundedBody(NAME, req.rawBody);
      if (sourceAllowed && !sourceAllowed(req.sourceIp)) {
        throw new WebhookRefusedError(NAME, 'source-not-allowed', 'the sender is not an address YooKassa notifies from');
      }
      const notification = jsonObjectBody(NAME, raw);
      const event = textField(notification, 'event', 64);
      const object = isRecord(notification.object) ? notification.object : undefined;
      if (notification.type !== 'notification' || !event || !object) {
        throw new WebhookRefusedError(NAME, 'malformed', 'not a YooKassa notification');
      }
      const paymentId = event.startsWith('payment.')
        ? textField(object, 'id', 64)
        : event === 'refund.succeeded'
          ? textField(object, 'payment_id', 64)
          : undefined;
      if (!event.startsWith('payment.') && event !== 'refund.succeeded') {
        return {
          type: 'ignored',
          event_id: `${event}:${textField(object, 'id', 64) ?? '-'}`,
          reason: `event ${event} is not about a payment`,
        };
      }
      if (!paymentId || !PAYMENT_ID.test(paymentId)) throw new WebhookRefusedError(NAME, 'malformed', 'the notification names no payment');
      let state: ProviderPaymentState;
      try {
        state = await fetchPayment(paymentId);
      } catch (err) {
        if (isDomainError(err) && err.type === 'not-found') {
          throw new WebhookRefusedError(NAME, 'unknown-payment', 'the notification names a payment YooKassa does not know');
        }
        throw err;
      }
      // The id is made of the re-read's state, not of the body's claims: a forged or early
      // "succeeded" cannot use up the id of the real success that comes later.
      return { type: 'payment', event_id: `${state.provider_payment_id}:${state.status}`, ...state };
    },
  };
}

/** A payment object of the API -> our state; undefined when it is not a payment object. */
function paymentState(p: unknown): ProviderPaymentState | undefined {
  if (!isRecord(p)) return undefined;
  const id = textField(p, 'id', 64);
  const status = textField(p, 'status', 40);
  if (!id || !status) return undefined;
  const amount = isRecord(p.amount) ? p.amount : {};
  const currency = textField(amount, 'currency', 3);
  const value = currency ? decimalToMinor(amount.value, currency) : undefined;
  const refunded = isRecord(p.refunded_amount) && currency ? decimalToMinor(p.refunded_amount.value, currency) : undefined;
  const reason = isRecord(p.cancellation_details) ? textField(p.cancellation_details, 'reason', 64) : undefined;
  // A state YooKassa may add later leaves the payment pending: the worker reads it again.
  const mapped =
    yookassaMapStatus(yookassaPaymentState(status, reason, value !== undefined && refunded !== undefined && refunded >= value)) ??
    'pending';
  const metadata = isRecord(p.metadata) ? p.metadata : {};
  return {
    provider_payment_id: id,
    payment_id: textField(metadata, 'payment_id'),
    status: mapped,
    amount: value,
    currency,
    occurred_at: isoTime(p.captured_at) ?? isoTime(p.created_at),
  };
}

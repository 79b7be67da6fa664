import {
  assertMoney,
  type CheckoutRequest,
  type CheckoutResult,
  decimalToMinor,
  minorToDecimal,
  NotFoundError,
  type PaymentProviderPort,
  type ProviderAdapterDeps,
  type ProviderPaymentState,
  refusedByProvider,
  UnavailableError,
  type VerifiedWebhook,
  WebhookRefusedError,
  type WebhookRequest,
} from '@svc/domain';
import { CRYPTOBOT_SIGNATURE_HEADER, cryptobotSignatureMatches } from './cryptobot-signature.ts';
import { cryptobotMapStatus } from './cryptobot-status.ts';
import { callProvider } from './provider-http.ts';
import { boundedBody, headerValue, isoTime, isRecord, jsonObjectBody, textField } from './webhook-input.ts';

export type CryptobotNetwork = 'mainnet' | 'testnet';

export const CRYPTOBOT_API = {
  mainnet: 'https://pay.crypt.bot/api',
  testnet: 'https://testnet-pay.crypt.bot/api',
} as const satisfies Record<CryptobotNetwork, string>;

/** An invoice not paid in this time expires (Crypto Pay's expires_in). */
export const CRYPTOBOT_INVOICE_TTL_SECONDS = 3600;

export interface CryptobotSettings {
  api_token: string;
  network?: CryptobotNetwork | undefined;
}

const NAME = 'CryptoBot';
const INVOICE_ID = /^\d{1,20}$/;

/**
 * CryptoBot's Crypto Pay API: an invoice priced in fiat (the payer picks the crypto asset),
 * our payment id as its payload; webhooks signed with the app token (crypto-pay-api-signature,
 * checked in constant time); re-reads through getInvoices. Crypto Pay has no idempotency key:
 * one invoice per payment is the caller's (checkout's) rule.
 */
export function cryptobotAdapter(settings: CryptobotSettings, deps: ProviderAdapterDeps = {}): PaymentProviderPort {
  const base = (deps.baseUrl ?? CRYPTOBOT_API[settings.network ?? 'mainnet']).replace(/\/+$/, '');
  const secrets = [settings.api_token];

  async function api(method: string, step: string, init: { json?: unknown; query?: Record<string, string> }): Promise<unknown> {
    const query = init.query ? `?${new URLSearchParams(init.query)}` : '';
    const { status, body } = await callProvider(deps.outbound, {
      provider: NAME,
      step,
      method: init.json === undefined ? 'GET' : 'POST',
      url: `${base}/${method}${query}`,
      headers: { 'crypto-pay-api-token': settings.api_token },
      json: init.json,
      timeoutMs: deps.timeoutMs,
      secrets,
      errorText: (b) => (isRecord(b) && isRecord(b.error) ? b.error.name : undefined),
    });
    if (!isRecord(body) || body.ok !== true) {
      const said = isRecord(body) && isRecord(body.error) ? textField(body.error, 'name', 120) : undefined;
      throw refusedByProvider(NAME, step, status, said ?? null, secrets);
    }
    return body.result;
  }

  return {
    kind: 'cryptobot',
    acceptsWebhooks: true,
    canFetchPayment: true,
    mapStatus: cryptobotMapStatus,

    async createCheckout(req: CheckoutRequest): Promise<CheckoutResult> {
      assertMoney(req.amount, req.currency);
      const invoice = await api('createInvoice', 'create invoice', {
        json: {
          currency_type: 'fiat',
          fiat: req.currency,
          amount: minorToDecimal(req.amount, req.currency),
          description: req.description.slice(0, 1024),
          payload: req.payment_id,
          expires_in: CRYPTOBOT_INVOICE_TTL_SECONDS,
          // The button shown after payment leads back to us; Crypto Pay takes only https links.
          ...(req.success_url.startsWith('https://') ? { paid_btn_name: 'callback', paid_btn_url: req.success_url } : {}),
        },
      });
      const id = textField(invoice, 'invoice_id', 20);
      const url = textField(invoice, 'bot_invoice_url', 2048) ?? textField(invoice, 'pay_url', 2048);
      if (!id || !url) throw new UnavailableError('CryptoBot created an invoice without an id or a link', 30);
      return { provider_payment_id: id, checkout_url: url, expires_at: isoTime(isRecord(invoice) ? invoice.expiration_date : undefined) };
    },

    async verifyWebhook(req: WebhookRequest): Promise<VerifiedWebhook> {
      const body = boundedBody(NAME, req.rawBody);
      const signature = headerValue(req.headers, CRYPTOBOT_SIGNATURE_HEADER);
      if (!signature) throw new WebhookRefusedError(NAME, 'missing-signature', `no ${CRYPTOBOT_SIGNATURE_HEADER} header`);
      if (!cryptobotSignatureMatches(settings.api_token, body, signature)) {
        throw new WebhookRefusedError(NAME, 'bad-signature', `the ${CRYPTOBOT_SIGNATURE_HEADER} does not match the body`);
      }
      const update = jsonObjectBody(NAME, body);
      const eventId = textField(update, 'update_id', 20);
      if (!eventId) throw new WebhookRefusedError(NAME, 'malformed', 'the update has no update_id');
      if (update.update_type !== 'invoice_paid') return { type: 'ignored', event_id: eventId, reason: 'not an invoice_paid update' };
      const state = invoiceState(update.payload);
      if (!state) throw new WebhookRefusedError(NAME, 'malformed', 'the update carries no invoice');
      return { type: 'payment', event_id: eventId, ...state, occurred_at: state.occurred_at ?? isoTime(update.request_date) };
    },

    async fetchPayment(providerPaymentId: string): Promise<ProviderPaymentState> {
      if (!INVOICE_ID.test(providerPaymentId)) throw new NotFoundError('CryptoBot invoice', providerPaymentId.slice(0, 80));
      const result = await api('getInvoices', 'read invoice', { query: { invoice_ids: providerPaymentId } });
      // The API documents an array; it answers { items: [...] }: take either.
      const items = Array.isArray(result) ? result : isRecord(result) && Array.isArray(result.items) ? result.items : [];
      const invoice = items.find((i: unknown) => textField(i, 'invoice_id', 20) === providerPaymentId);
      const state = invoiceState(invoice);
      if (!state) throw new NotFoundError('CryptoBot invoice', providerPaymentId);
      return state;
    },
  };
}

/** An invoice object -> our state; undefined when it is not an invoice. */
function invoiceState(invoice: unknown): ProviderPaymentState | undefined {
  if (!isRecord(invoice)) return undefined;
  const id = textField(invoice, 'invoice_id', 20);
  if (!id) return undefined;
  // A status Crypto Pay may add later leaves the payment pending: the worker reads it again.
  const status = (typeof invoice.status === 'string' ? cryptobotMapStatus(invoice.status) : null) ?? 'pending';
  const currency = invoice.currency_type === 'fiat' ? textField(invoice, 'fiat', 8) : undefined;
  return {
    provider_payment_id: id,
    payment_id: textField(invoice, 'payload', 255),
    status,
    amount: currency ? decimalToMinor(invoice.amount, currency) : undefined,
    currency,
    occurred_at: isoTime(invoice.paid_at),
  };
}

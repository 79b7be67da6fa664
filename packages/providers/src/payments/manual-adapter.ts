import {
  assertMoney,
  type CheckoutRequest,
  type CheckoutResult,
  NotFoundError,
  type PaymentProviderPort,
  type ProviderPaymentStatus,
  ValidationError,
} from '@svc/domain';

export interface ManualSettings {
  instructions: string;
}

/**
 * Payment outside the system (bank transfer, cash): no hosted page and no callbacks. The
 * checkout answers the provider's instructions instead of a URL; an admin confirms or
 * cancels the payment, so there is nothing to re-read either.
 */
export function manualAdapter(settings: ManualSettings): PaymentProviderPort {
  return {
    kind: 'manual',
    acceptsWebhooks: false,
    canFetchPayment: false,
    async createCheckout(req: CheckoutRequest): Promise<CheckoutResult> {
      assertMoney(req.amount, req.currency);
      if (!settings.instructions?.trim())
        throw new ValidationError('the manual provider has no instructions', { instructions: 'required' });
      return { provider_payment_id: `manual_${req.payment_id}`, checkout_url: null, instructions: settings.instructions };
    },
    async verifyWebhook(): Promise<never> {
      throw new NotFoundError('webhook endpoint of a manual payment provider');
    },
    mapStatus: (): ProviderPaymentStatus | null => null,
    async fetchPayment(): Promise<never> {
      throw new NotFoundError('provider-side state of a manual payment');
    },
  };
}

import { checkFields, PAYMENT_PROVIDER_KINDS } from '@svc/domain';
import { describe, expect, it } from 'vitest';
import { paymentProviderAdapter } from './registry.ts';

describe('payment provider registry', () => {
  it('builds the port of every declared kind from its settings', () => {
    const settings: Record<string, [Record<string, string>, Record<string, string>]> = {
      stripe: [{}, { secret_key: 'sk_test_x', webhook_secret: 'whsec_x' }],
      cryptobot: [{ network: 'testnet' }, { api_token: '1:abc' }],
      yookassa: [{ shop_id: '123' }, { secret_key: 'test_abc' }],
      manual: [{ instructions: 'Transfer to IBAN ...' }, {}],
    };
    for (const kind of Object.keys(PAYMENT_PROVIDER_KINDS)) {
      const [config, secrets] = settings[kind] ?? [{}, {}];
      expect(paymentProviderAdapter(kind, config, secrets).kind).toBe(kind);
    }
  });

  it('a missing secret is an unavailable problem naming the setting, not a value', () => {
    const thrown = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e;
      }
      return undefined;
    };
    const missing = thrown(() => paymentProviderAdapter('stripe', {}, { secret_key: 'sk_test_hidden' }));
    expect(missing).toMatchObject({ type: 'unavailable', message: expect.stringContaining('webhook_secret') });
    expect((missing as Error).message).not.toContain('sk_test_hidden');
    expect(thrown(() => paymentProviderAdapter('paypal', {}, {}))).toMatchObject({ type: 'validation' });
  });

  it("the new kinds' settings are checked by the admin API's field rules", () => {
    const check = (kind: keyof typeof PAYMENT_PROVIDER_KINDS, values: Record<string, unknown>) =>
      checkFields(PAYMENT_PROVIDER_KINDS[kind].fields, values, { prefix: 'config.', kind, allowNull: false });
    expect(check('cryptobot', { api_token: '12345:AAz_x-y', network: 'testnet' })).toEqual({});
    expect(check('cryptobot', { network: 'devnet' })).toHaveProperty(['config.network']);
    expect(
      check('yookassa', { shop_id: '501234', secret_key: 'live_abc', allowed_source_cidrs: '185.71.76.0/27, 2a02:5180::/32' }),
    ).toEqual({});
    expect(check('yookassa', { allowed_source_cidrs: 'any' })).toEqual({});
    expect(check('yookassa', { allowed_source_cidrs: '300.1.1.1/8' })).toHaveProperty(['config.allowed_source_cidrs']);
    expect(check('yookassa', { shop_id: 'abc', secret_key: 'nope' })).toEqual({
      'config.shop_id': expect.any(String),
      'config.secret_key': expect.any(String),
    });
  });

  it('manual: no URL but the instructions; nothing to re-read', async () => {
    const manual = paymentProviderAdapter('manual', { instructions: 'Transfer to IBAN DE00 ...' }, {});
    const result = await manual.createCheckout({
      payment_id: 'pay_9',
      amount: 1000,
      currency: 'EUR',
      description: 'Plan',
      success_url: 'https://x',
      cancel_url: 'https://y',
      idempotency_key: 'k',
    });
    expect(result).toEqual({ provider_payment_id: 'manual_pay_9', checkout_url: null, instructions: 'Transfer to IBAN DE00 ...' });
    expect(manual.canFetchPayment).toBe(false);
    await expect(manual.fetchPayment('manual_pay_9')).rejects.toMatchObject({ type: 'not-found' });
  });
});

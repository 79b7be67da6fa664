import { PRIVATE_NETWORKS_SETTING } from '@svc/domain';
import { cryptobotAdapter, stripeAdapter, yookassaAdapter } from '@svc/providers';
import { testOutbound } from '@svc/testkit';
import { type StandIn, startStandIn } from '@svc/testkit/provider-stand-in';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Payment API bases (billing.api_base_urls, SVC_BILLING_*_API_URL) under the outbound policy
// (issue 29.2): every adapter calls out through the outbound client, so a base on a private
// network needs the owner's allowance and one at a metadata address is refused whatever it says.
let api: StandIn;
beforeAll(async () => {
  api = await startStandIn();
  api.handle(() => ({ status: 500, json: { error: 'a request reached the stand-in' } }));
});
afterAll(() => api.close());

const checkout = {
  payment_id: 'pay_1',
  amount: 4990,
  currency: 'EUR',
  description: 'Plan Pro, 30 days',
  client_email: 'client@example.com',
  success_url: 'https://portal.example/paid',
  cancel_url: 'https://portal.example/cancel',
  idempotency_key: 'key-123',
};
const adapters = (baseUrl: string, allowPrivateNetworks: boolean) => {
  const deps = { outbound: testOutbound({ allowPrivateNetworks }), baseUrl, timeoutMs: 2000 };
  return {
    stripe: stripeAdapter({ secret_key: 'sk_test_outbound', webhook_secret: 'whsec_outbound' }, deps),
    cryptobot: cryptobotAdapter({ api_token: '12345:AAzOutboundToken', network: 'testnet' }, deps),
    yookassa: yookassaAdapter({ shop_id: '1', secret_key: 'test_outbound' }, deps),
  };
};

describe('payment APIs the server may reach', () => {
  it('a base on 127.0.0.1 is refused, naming the rule, unless private networks are allowed; no request reaches it', async () => {
    for (const [kind, port] of Object.entries(adapters(api.base, false))) {
      const err = await port.createCheckout(checkout).catch((e: unknown) => e);
      expect(err, kind).toMatchObject({ type: 'unavailable' });
      expect((err as Error).message, kind).toContain(
        `the destination is refused: a loopback address, allowed only when the owner turns on ${PRIVATE_NETWORKS_SETTING}`,
      );
    }
    expect(api.requests).toEqual([]);
    for (const [kind, port] of Object.entries(adapters(api.base, true)))
      expect(await port.createCheckout(checkout).catch((e: unknown) => e), kind).toMatchObject({ type: 'unavailable' });
    expect(api.requests.length).toBe(3);
  });

  it('a base at a metadata address is refused whatever the setting', async () => {
    for (const base of ['http://169.254.169.254/', 'http://[::ffff:169.254.169.254]/'])
      for (const [kind, port] of Object.entries(adapters(base, true))) {
        const err = await port.createCheckout(checkout).catch((e: unknown) => e);
        expect((err as Error).message, `${kind} ${base}`).toContain('the destination is refused: a link-local address, never allowed');
      }
  });

  it('an adapter made without the outbound client cannot call out', async () => {
    const bare = cryptobotAdapter({ api_token: '12345:AAzOutboundToken', network: 'testnet' }, { baseUrl: api.base });
    const before = api.requests.length;
    expect(await bare.createCheckout(checkout).catch((e: unknown) => e)).toMatchObject({ type: 'unavailable' });
    expect(api.requests.length).toBe(before);
  });
});

import { createHash, createHmac } from 'node:crypto';
import { CreatePaymentProviderInput, createPaymentProvider, openProviderSecrets, parseInput } from '@svc/domain';
import { paymentProviderAdapter } from '@svc/providers';
import { createDomainTestbed, type DomainTestbed } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The new kinds are created through the existing use case (secrets sealed, public settings
// checked), and the registry builds a working port from what is stored: the sealed token
// opened by the installation key verifies a webhook signed with it.
let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

const create = (input: Record<string, unknown>) => createPaymentProvider(bed.ctx(), parseInput(CreatePaymentProviderInput, input));
const portOf = async (id: string) => {
  const row = await bed.deps.db.selectFrom('payment_providers').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  return paymentProviderAdapter(row.kind, row.config as Record<string, unknown>, openProviderSecrets(bed.deps.secrets, row.secrets_enc));
};

describe('payment provider kinds cryptobot and yookassa', () => {
  it('a cryptobot provider stores its token sealed; the port built from the row verifies webhooks signed with it', async () => {
    const token = '4242:AAStoredCryptoPayToken0000000000';
    const p = await create({ kind: 'cryptobot', name: 'Crypto', enabled: true, config: { api_token: token, network: 'testnet' } });
    expect(p).toMatchObject({ kind: 'cryptobot', enabled: true, config: { network: 'testnet' }, secrets_set: ['api_token'] });
    const body = JSON.stringify({
      update_id: 1,
      update_type: 'invoice_paid',
      payload: { invoice_id: 7, status: 'paid', currency_type: 'fiat', fiat: 'EUR', amount: '5', payload: 'pay_x' },
    });
    const signature = createHmac('sha256', createHash('sha256').update(token).digest()).update(body).digest('hex');
    const port = await portOf(p.id);
    await expect(
      port.verifyWebhook({ rawBody: Buffer.from(body), headers: { 'crypto-pay-api-signature': signature }, sourceIp: '127.0.0.1' }),
    ).resolves.toMatchObject({ type: 'payment', payment_id: 'pay_x', status: 'succeeded', amount: 500, currency: 'EUR' });
  });

  it('a yookassa provider takes a shop id, a sealed key and an optional allow-list; a bad range is refused naming the field', async () => {
    const p = await create({
      kind: 'yookassa',
      name: 'YooKassa',
      enabled: true,
      config: { shop_id: '501234', secret_key: 'test_StoredKey', allowed_source_cidrs: '185.71.76.0/27, 2a02:5180::/32' },
    });
    expect(p).toMatchObject({
      config: { shop_id: '501234', allowed_source_cidrs: '185.71.76.0/27, 2a02:5180::/32' },
      secrets_set: ['secret_key'],
    });
    expect((await portOf(p.id)).kind).toBe('yookassa');
    await expect(
      create({ kind: 'yookassa', name: 'bad', config: { shop_id: '1', allowed_source_cidrs: '185.71.76.0/40' } }),
    ).rejects.toMatchObject({ type: 'validation', errors: { 'config.allowed_source_cidrs': expect.stringContaining('prefix') } });
  });
});

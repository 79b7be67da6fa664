import {
  CreatePaymentProviderInput,
  createPaymentProvider,
  deletePaymentProvider,
  parseInput,
  UpdatePaymentProviderInput,
  updatePaymentProvider,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, TEST_OWNER } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditOf } from '../support.ts';
import { SECRET_KEY, stripe } from './billing-support.ts';

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

describe('payment providers: audit', () => {
  it('create, update and delete are audited by the acting admin with setting names only, never secret values', async () => {
    const { id } = await createPaymentProvider(bed.ctx(), parseInput(CreatePaymentProviderInput, stripe));
    await updatePaymentProvider(
      bed.ctx(),
      id,
      parseInput(UpdatePaymentProviderInput, { enabled: true, config: { secret_key: SECRET_KEY.replace('sk_test_', 'sk_live_') } }),
    );
    await deletePaymentProvider(bed.ctx(), id);
    const rows = await auditOf(bed.ctx(), id);
    expect(rows.map((r) => r.action)).toEqual(['payment_provider.created', 'payment_provider.updated', 'payment_provider.deleted']);
    for (const r of rows) expect(r).toMatchObject({ actor_type: 'admin', actor_id: TEST_OWNER.id, entity_type: 'payment_provider' });
    expect(rows[0]?.details).toMatchObject({ kind: 'stripe', secrets_set: ['secret_key', 'webhook_secret'] });
    expect(rows[1]?.details).toMatchObject({ enabled: { from: false, to: true }, secrets_changed: ['secret_key'] });
    expect(JSON.stringify(rows)).not.toMatch(/sk_(test|live)_|whsec_/);
  });
});

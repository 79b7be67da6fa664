import { deletePaymentProvider, getPaymentProvider } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payment } from './billing-support.ts';

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

describe('deletePaymentProvider', () => {
  it('deletes an unreferenced provider; a second delete is not found', async () => {
    const { id } = await fixtures(bed.ctx()).paymentProvider();
    await deletePaymentProvider(bed.ctx(), id);
    await expect(getPaymentProvider(bed.ctx(), id)).rejects.toMatchObject({ type: 'not-found' });
    await expect(deletePaymentProvider(bed.ctx(), id)).rejects.toMatchObject({ type: 'not-found' });
  });

  it('is refused while payments reference it, naming them in blocked_by', async () => {
    const { id } = await fixtures(bed.ctx()).paymentProvider();
    const pay = await payment(bed.ctx(), { provider_id: id });
    await expect(deletePaymentProvider(bed.ctx(), id)).rejects.toMatchObject({
      type: 'conflict',
      message: expect.stringMatching(/1 payment\b/),
      extra: { blocked_by: { payments: [pay] } },
    });
    expect((await getPaymentProvider(bed.ctx(), id)).id).toBe(id);
  });
});

import { deleteClient, deleteSubscription, getClient } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientSession } from '../customers-support.ts';

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

describe('deleteClient', () => {
  it('deletes a client without subscriptions, with its sessions; a second delete is not found', async () => {
    const c = await fixtures(bed.ctx()).client();
    await clientSession(bed.ctx(), c.id);
    await deleteClient(bed.ctx(), c.id);
    await expect(getClient(bed.ctx(), c.id)).rejects.toMatchObject({ type: 'not-found' });
    expect(await bed.deps.db.selectFrom('sessions').select('id').where('subject_id', '=', c.id).execute()).toEqual([]);
    await expect(deleteClient(bed.ctx(), c.id)).rejects.toMatchObject({ type: 'not-found' });
  });

  it('is refused (conflict) while the client has subscriptions, naming them in blocked_by; allowed once they are gone', async () => {
    const c = await fixtures(bed.ctx()).client();
    const sub = await fixtures(bed.ctx()).subscription({ client_id: c.id });
    await expect(deleteClient(bed.ctx(), c.id)).rejects.toMatchObject({
      type: 'conflict',
      message: expect.stringMatching(/subscriptions/),
      extra: { blocked_by: { subscriptions: [sub.id] } },
    });
    expect((await getClient(bed.ctx(), c.id)).id).toBe(c.id);
    await deleteSubscription(bed.ctx(), sub.id);
    await deleteClient(bed.ctx(), c.id);
  });
});

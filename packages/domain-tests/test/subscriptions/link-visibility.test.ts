import { getSubscription, getSubscriptionLink, listSubscriptions, mayReadLinks, SYSTEM } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusal } from '../support.ts';

// Issue 12.10: a subscription link is full proxy access. Reading one is for owners, admins,
// the shell and the client it belongs to; a viewer sees that it exists and its status.

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

const admin = (role: 'owner' | 'admin' | 'viewer') => ({ type: 'admin' as const, id: '00000000-0000-4000-8000-000000000001', role });

describe('who may read a subscription link', () => {
  it('owners, admins, the shell and clients may; viewers and anonymous callers may not', () => {
    expect(mayReadLinks(admin('owner'))).toBe(true);
    expect(mayReadLinks(admin('admin'))).toBe(true);
    expect(mayReadLinks(SYSTEM)).toBe(true);
    expect(mayReadLinks({ type: 'client', id: '00000000-0000-4000-8000-000000000002' })).toBe(true);
    expect(mayReadLinks(admin('viewer'))).toBe(false);
    expect(mayReadLinks({ type: 'admin', id: null })).toBe(false);
    expect(mayReadLinks({ type: 'anonymous', id: null })).toBe(false);
  });

  it('a viewer reads the subscription with link null (everything else the same) and is refused the link', async () => {
    const make = fixtures(bed.ctx());
    const sub = await make.subscription({ client_id: (await make.client()).id });
    const asViewer = bed.ctx(admin('viewer'));
    expect(await getSubscription(asViewer, sub.id)).toEqual({ ...(await getSubscription(bed.ctx(admin('admin')), sub.id)), link: null });
    const page = await listSubscriptions(asViewer, { client_id: sub.client_id, limit: 10 });
    expect(page.items.map((i) => i.link)).toEqual([null]);
    expect((await refusal(getSubscriptionLink(asViewer, sub.id))).type).toBe('forbidden');
    expect((await getSubscriptionLink(bed.ctx(admin('owner')), sub.id)).url).toBe(sub.link);
  });
});

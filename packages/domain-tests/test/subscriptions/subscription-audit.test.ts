import { deleteSubscription, parseInput, rotateSubscriptionCredentials, UpdateSubscriptionInput, updateSubscription } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures, TEST_OWNER } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditOf } from '../support.ts';

const BASE = 'https://panel.example.com';

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed({ env: { SVC_PUBLIC_BASE_URL: BASE } });
});
afterAll(() => bed.close());

const tokenOf = (link: string) => link.slice(`${BASE}/sub/`.length);

describe('audit: every subscription change is recorded by the acting admin, never with a secret', () => {
  it('records created, updated (what changed and the status move), credentials_rotated and deleted', async () => {
    const sub = await fixtures(bed.ctx()).subscription();
    await updateSubscription(bed.ctx(), sub.id, parseInput(UpdateSubscriptionInput, { status: 'disabled' }));
    const rotated = await rotateSubscriptionCredentials(bed.ctx(), sub.id);
    await deleteSubscription(bed.ctx(), sub.id);
    const rows = await auditOf(bed.ctx(), sub.id);
    expect(rows.map((r) => r.action)).toEqual([
      'subscription.created',
      'subscription.updated',
      'subscription.credentials_rotated',
      'subscription.deleted',
    ]);
    for (const r of rows) expect(r).toMatchObject({ actor_type: 'admin', actor_id: TEST_OWNER.id, entity_type: 'subscription' });
    const text = JSON.stringify(rows);
    expect(text).not.toContain(tokenOf(sub.link));
    expect(text).not.toContain(tokenOf(rotated.link));
    expect(rows[1]?.details).toMatchObject({ changed: ['status'], status: { from: 'active', to: 'disabled' } });
  });
});

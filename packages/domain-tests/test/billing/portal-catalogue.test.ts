import { type Page, portalPaymentMethods, portalPlans } from '@svc/domain';
import { describe, expect, it } from 'vitest';
import { fileTestbed } from '../support.ts';

// Issue 28 item 12: what a customer may buy and pay with comes a page at a time, keyset by id,
// like every list (spec 4.2): no cap, no repeats, no gaps.
const t = fileTestbed();

/** Every id a walk of `limit`-sized pages reads, and how many pages it took. */
async function walk(list: (page: { limit: number; cursor?: string }) => Promise<Page<{ id: string }>>, limit: number) {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let pages = 1; ; pages++) {
    const page = await list({ limit, ...(cursor ? { cursor } : {}) });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    ids.push(...page.items.map((i) => i.id));
    if (!page.next_cursor) return { ids, pages };
    cursor = page.next_cursor;
  }
}

describe('portal plans and payment methods page by id', () => {
  it('plans on sale a page at a time, oldest first, archived ones left out', async () => {
    const made = [];
    for (let i = 0; i < 5; i++) made.push((await t.f.plan({ price: 1000 - i })).id);
    const archived = await t.f.plan({ archived: true });
    const { ids, pages } = await walk((p) => portalPlans(t.bed.ctx(), p), 2);
    expect(pages).toBeGreaterThan(1);
    expect(ids).toEqual(made);
    expect(ids).not.toContain(archived.id);
  });

  it('enabled payment methods a page at a time, oldest first, without their settings', async () => {
    const made = [];
    for (let i = 0; i < 5; i++) made.push((await t.f.paymentProvider({ enabled: true, name: `Desk ${i}` })).id);
    const off = await t.f.paymentProvider({ enabled: false });
    const { ids, pages } = await walk((p) => portalPaymentMethods(t.bed.ctx(), p), 2);
    expect(pages).toBeGreaterThan(1);
    expect(ids).toEqual(made);
    expect(ids).not.toContain(off.id);
    const [first] = (await portalPaymentMethods(t.bed.ctx(), { limit: 1 })).items;
    expect(first).toEqual({ id: made[0], kind: 'manual', name: 'Desk 0' });
  });

  it('a cursor this list did not make is a validation error naming the cursor', async () => {
    await expect(portalPlans(t.bed.ctx(), { limit: 2, cursor: 'bm90LWEtY3Vyc29y' })).rejects.toMatchObject({
      type: 'validation',
      errors: { cursor: 'invalid cursor' },
    });
  });
});

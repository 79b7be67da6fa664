import { CreatePlanInput, createPlan, getPlan, parseInput } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessGroup } from '../customers-support.ts';

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

const base = { name: 'Monthly 100 GB', price: 990, currency: 'EUR', duration_days: 30 };
const create = (input: Record<string, unknown>) => createPlan(bed.ctx(), parseInput(CreatePlanInput, { ...base, ...input }));

describe('createPlan', () => {
  it('defaults: on sale (not archived), unlimited traffic, no access groups', async () => {
    const plan = await create({});
    expect(plan).toMatchObject({ ...base, traffic_limit_bytes: null, access_group_ids: [], archived: false });
    expect(plan.id).toMatch(/^pln_[0-9a-z]{26}$/);
    expect(plan.updated_at).toBe(plan.created_at);
    expect(await getPlan(bed.ctx(), plan.id)).toEqual(plan);
  });

  it('stores every field: traffic limit, access groups (sorted, duplicates collapsed), archived, a free price; the name trimmed', async () => {
    const [g1, g2] = [await accessGroup(bed.ctx()), await accessGroup(bed.ctx())];
    const plan = await create({
      name: '  Big  ',
      traffic_limit_bytes: 100 * 2 ** 30,
      access_group_ids: [g2, g1, g2],
      archived: true,
      price: 0,
    });
    expect(plan).toMatchObject({
      name: 'Big',
      traffic_limit_bytes: 100 * 2 ** 30,
      access_group_ids: [g1, g2].sort(),
      archived: true,
      price: 0,
    });
    expect((await getPlan(bed.ctx(), plan.id)).access_group_ids).toEqual([g1, g2].sort());
  });

  it('the description is plain text for customers: trimmed, line breaks kept, empty is none, at most 1000 characters, no control characters', async () => {
    expect((await create({})).description).toBeNull();
    const plan = await create({ description: '  50 GB a month\nServers in 3 countries\n  ' });
    expect(plan.description).toBe('50 GB a month\nServers in 3 countries');
    expect((await getPlan(bed.ctx(), plan.id)).description).toBe(plan.description);
    expect((await create({ description: '   ' })).description).toBeNull();
    expect((await create({ description: null })).description).toBeNull();
    const reason = (description: string) => {
      try {
        parseInput(CreatePlanInput, { ...base, description });
        return null;
      } catch (err) {
        return (err as { errors: Record<string, string> }).errors.description;
      }
    };
    expect(reason('x'.repeat(1000))).toBeNull();
    expect(reason('x'.repeat(1001))).toMatch(/at most 1000/);
    expect(reason('bell\u0007')).toMatch(/control characters/);
    expect(reason('tab\tand\r\nbreaks')).toMatch(/control characters/);
    expect(reason('tab\tand\nbreak')).toBeNull();
  });

  it('each access group must exist: the unknown ones are named by position, and nothing is created', async () => {
    const g = await accessGroup(bed.ctx());
    const count = async () => (await bed.deps.db.selectFrom('plans').select('id').execute()).length;
    const before = await count();
    await expect(create({ access_group_ids: [g, 'agr_missing', 'agr_gone'] })).rejects.toMatchObject({
      type: 'validation',
      errors: { 'access_group_ids.1': expect.stringContaining('agr_missing'), 'access_group_ids.2': expect.any(String) },
    });
    expect(await count()).toBe(before);
  });

  it('the currency is an ISO 4217 code in upper case that the runtime knows', () => {
    const reason = (currency: string) => {
      try {
        parseInput(CreatePlanInput, { ...base, currency });
        return null;
      } catch (err) {
        return (err as { errors: Record<string, string> }).errors.currency;
      }
    };
    expect(reason('eur')).toBe('must be an ISO 4217 code in upper case (EUR)');
    expect(reason('EURO')).toBe('must be an ISO 4217 code in upper case (EUR)');
    expect(reason('QQQ')).toBe('not an ISO 4217 currency code');
    expect(reason('JPY')).toBeNull();
  });
});

import { CreateAccessGroupInput, createAccessGroup, getAccessGroup, parseInput } from '@svc/domain';
import { TEST_OWNER, uniqueName } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { auditOf, fileTestbed, inputErrors, refusal, revisionsOf } from '../support.ts';

const t = fileTestbed();

const create = (input: Record<string, unknown>) => createAccessGroup(t.bed.ctx(), parseInput(CreateAccessGroupInput, input));

describe('createAccessGroup', () => {
  it('groups existing inbounds (without repeats, sorted by id), audited; no subscription has it yet, so no revision moves', async () => {
    const node = (await t.f.node()).id;
    const [a, b] = [(await t.f.inbound({ node_id: node })).id, (await t.f.inbound({ node_id: node })).id];
    const before = await revisionsOf(t.bed, [node]);
    const group = await create({ name: 'europe', inbound_ids: [b, a, b] });
    expect(group).toMatchObject({ name: 'europe', inbound_ids: [a, b].sort() });
    expect(group.id).toMatch(/^agr_/);
    expect(Object.keys(group).sort()).toEqual(['created_at', 'id', 'inbound_ids', 'name', 'updated_at']);
    expect(await revisionsOf(t.bed, [node])).toEqual(before);
    expect(await getAccessGroup(t.bed.ctx(), group.id)).toEqual(group);
    const audit = await auditOf(t.bed, group.id);
    expect(audit).toMatchObject([{ action: 'access_group.created', actor_id: TEST_OWNER.id, entity_type: 'access_group' }]);
    expect((await create({ name: uniqueName('empty') })).inbound_ids).toEqual([]);
  });

  it('unknown inbounds are refused per position; a taken name is a conflict; blank names and other fields are refused', async () => {
    const a = (await t.f.inbound()).id;
    expect(await refusal(create({ name: uniqueName('g'), inbound_ids: [a, 'inb_nope'] }))).toMatchObject({
      type: 'validation',
      errors: { 'inbound_ids.1': 'no such inbound: inb_nope' },
    });
    const name = uniqueName('g');
    await create({ name });
    expect(await refusal(create({ name }))).toMatchObject({ type: 'conflict', errors: { name: 'already taken' } });
    expect(inputErrors(CreateAccessGroupInput, { name: 'g', members: [] })).toEqual({ '(body)': 'Unrecognized key: "members"' });
    expect(inputErrors(CreateAccessGroupInput, { name: '  ' })).toHaveProperty('name');
    expect(await refusal(getAccessGroup(t.bed.ctx(), 'agr_nope'))).toMatchObject({ type: 'not-found' });
  });
});

import { deleteInbound, getInbound, parseInput, UpdateAccessGroupInput, updateAccessGroup } from '@svc/domain';
import { describe, expect, it } from 'vitest';
import { auditOf, fileTestbed, plusOne, refusal, revisionsOf } from '../support.ts';

const t = fileTestbed();

describe('deleteInbound', () => {
  it('is refused as a conflict naming the access groups holding the inbound; afterwards its node gets a new revision, audited, and the port is free again', async () => {
    const node = (await t.f.node()).id;
    const i = await t.f.inbound({ node_id: node, port: 6000 });
    const group = await t.f.accessGroup({ inbound_ids: [i.id] });
    const blocked = await refusal(deleteInbound(t.bed.ctx(), i.id));
    expect(blocked.type).toBe('conflict');
    expect(blocked.extra).toEqual({ blocked_by: { access_groups: [group.id] } });
    expect(blocked.message).toContain(group.id);

    await updateAccessGroup(t.bed.ctx(), group.id, parseInput(UpdateAccessGroupInput, { inbound_ids: [] }));
    const before = await revisionsOf(t.bed, [node]);
    await deleteInbound(t.bed.ctx(), i.id);
    expect(await revisionsOf(t.bed, [node])).toEqual(plusOne(before, [node]));
    expect(await refusal(getInbound(t.bed.ctx(), i.id))).toMatchObject({ type: 'not-found' });
    expect((await auditOf(t.bed, i.id)).map((r) => r.action)).toEqual(['inbound.created', 'inbound.deleted']);
    await t.f.inbound({ node_id: node, port: 6000 });
  });
});

import { getAccessGroup, parseInput, UpdateAccessGroupInput, updateAccessGroup } from '@svc/domain';
import { TEST_OWNER, uniqueName } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { auditOf, fileTestbed, inputErrors, plusOne, refusal, revisionsOf } from '../support.ts';

const t = fileTestbed();

const update = (id: string, input: Record<string, unknown>) =>
  updateAccessGroup(t.bed.ctx(), id, parseInput(UpdateAccessGroupInput, input));
/** `count` inbounds, each on a node of its own. */
async function inboundsOnOwnNodes(count: number): Promise<{ nodes: string[]; inbounds: string[] }> {
  const made = [];
  for (let i = 0; i < count; i++) made.push(await t.f.inbound());
  return { nodes: made.map((i) => i.node_id), inbounds: made.map((i) => i.id) };
}

describe('updateAccessGroup', () => {
  it('inbound_ids replaces the membership; exactly the nodes of the added and the removed inbounds get a new revision, audited', async () => {
    const { nodes, inbounds } = await inboundsOnOwnNodes(5);
    const [n1, , , n4] = nodes as [string, string, string, string, string];
    const [i1, i2, i3, i4] = inbounds as [string, string, string, string, string];
    const g = await t.f.accessGroup({ inbound_ids: [i1, i2, i3] });
    const before = await revisionsOf(t.bed, nodes);
    const res = await update(g.id, { inbound_ids: [i2, i3, i4] });
    expect(res.inbound_ids).toEqual([i2, i3, i4].sort());
    // i1 removed (n1), i4 added (n4); n2 and n3 keep their inbounds in the group; n5 has nothing to do with it.
    expect(await revisionsOf(t.bed, nodes)).toEqual(plusOne(before, [n1, n4]));
    const audit = (await auditOf(t.bed, g.id)).find((a) => a.action === 'access_group.updated');
    expect(audit?.actor_id).toBe(TEST_OWNER.id);
    expect(audit?.details).toMatchObject({ added: [i4], removed: [i1], nodes_bumped: [n1, n4].sort() });
  });

  it('the same membership again (any order, repeats) and a rename move no revision', async () => {
    const { nodes, inbounds } = await inboundsOnOwnNodes(2);
    const [i1, i2] = inbounds as [string, string];
    const g = await t.f.accessGroup({ inbound_ids: [i1, i2] });
    const before = await revisionsOf(t.bed, nodes);
    expect((await update(g.id, { inbound_ids: [i2, i1, i2] })).inbound_ids).toEqual([i1, i2].sort());
    expect((await update(g.id, { name: uniqueName('renamed') })).inbound_ids).toEqual([i1, i2].sort());
    expect(await revisionsOf(t.bed, nodes)).toEqual(before);
  });

  it('emptying a group moves the revision of every node it had; an unknown inbound in the new list changes nothing', async () => {
    const { nodes, inbounds } = await inboundsOnOwnNodes(2);
    const [i1, i2] = inbounds as [string, string];
    const g = await t.f.accessGroup({ inbound_ids: [i1, i2] });
    expect((await refusal(update(g.id, { inbound_ids: [i1, 'inb_nope'] }))).errors).toHaveProperty(['inbound_ids.1']);
    expect((await getAccessGroup(t.bed.ctx(), g.id)).inbound_ids).toEqual([i1, i2].sort());
    const before = await revisionsOf(t.bed, nodes);
    expect((await update(g.id, { inbound_ids: [] })).inbound_ids).toEqual([]);
    expect(await revisionsOf(t.bed, nodes)).toEqual(plusOne(before, nodes));
  });

  it("another group's name is a conflict; other fields are refused; an unknown group is not found", async () => {
    const [a, b] = [await t.f.accessGroup(), await t.f.accessGroup()];
    expect(await refusal(update(b.id, { name: a.name }))).toMatchObject({ type: 'conflict', errors: { name: 'already taken' } });
    expect(inputErrors(UpdateAccessGroupInput, { inbounds: [] })).not.toEqual({});
    expect(await refusal(update('agr_nope', { name: uniqueName('x') }))).toMatchObject({ type: 'not-found' });
  });
});

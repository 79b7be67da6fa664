import { deleteChain, deleteNode, getNode } from '@svc/domain';
import { TEST_OWNER } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { auditOf, fileTestbed, refusal } from '../support.ts';

const t = fileTestbed();

describe('deleteNode', () => {
  it('deletes a node nothing uses, audited; afterwards it is not found', async () => {
    const node = await t.f.node();
    await deleteNode(t.bed.ctx(), node.id);
    expect(await refusal(getNode(t.bed.ctx(), node.id))).toMatchObject({ type: 'not-found' });
    expect(await refusal(deleteNode(t.bed.ctx(), node.id))).toMatchObject({ type: 'not-found' });
    const audit = await auditOf(t.bed, node.id);
    expect(audit.map((a) => a.action)).toEqual(['node.created', 'node.deleted']);
    expect(audit[1]).toMatchObject({ actor_id: TEST_OWNER.id, entity_type: 'node' });
  });

  it('a hop of a chain is refused as a conflict naming the chains (spec 4.4, 7.2); once the chain is gone the node can go', async () => {
    const [a, b] = [await t.f.node(), await t.f.node()];
    const chain = await t.f.chain({
      hops: [
        { node_id: a.id, port: 21000 },
        { node_id: b.id, port: 21000 },
      ],
    });
    for (const id of [a.id, b.id]) {
      const err = await refusal(deleteNode(t.bed.ctx(), id));
      expect(err.type).toBe('conflict');
      expect(err.message).toMatch(/chain/);
      expect(err.extra).toEqual({ blocked_by: { chains: [chain.id] } });
    }
    expect((await getNode(t.bed.ctx(), a.id)).id).toBe(a.id);
    await deleteChain(t.bed.ctx(), chain.id);
    await deleteNode(t.bed.ctx(), a.id);
  });

  it('a node still running inbounds is refused naming them; both kinds of blocker are named together, and nothing is audited', async () => {
    const [a, b] = [await t.f.node(), await t.f.node()];
    const i1 = await t.f.inbound({ node_id: a.id, port: 443 });
    const i2 = await t.f.inbound({ node_id: a.id, port: 8443 });
    const inbounds = await refusal(deleteNode(t.bed.ctx(), a.id));
    expect(inbounds.message).toMatch(/inbound/);
    expect(inbounds.extra).toEqual({ blocked_by: { inbounds: [i1.id, i2.id].sort() } });

    const chain = await t.f.chain({
      hops: [
        { node_id: a.id, port: 22000 },
        { node_id: b.id, port: 22000 },
      ],
    });
    const both = await refusal(deleteNode(t.bed.ctx(), a.id));
    expect(both.extra).toEqual({ blocked_by: { chains: [chain.id], inbounds: [i1.id, i2.id].sort() } });
    expect((await auditOf(t.bed, a.id)).map((x) => x.action)).not.toContain('node.deleted');
  });
});

import { assertInboundFitsChain, deleteChain, deleteInbound, deleteNode, getChain, unitOfWork } from '@svc/domain';
import { TEST_OWNER } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { auditOf, fileTestbed, plusOne, refusal, revisionsOf } from '../support.ts';

const t = fileTestbed();

const node = async () => (await t.f.node()).id;

describe('deleteChain', () => {
  it('is refused as a conflict naming the inbounds routed through it; afterwards it deletes, drops the hops, bumps the hop nodes and is audited', async () => {
    const [a, b, c, other] = [await node(), await node(), await node(), await node()];
    const ch = await t.f.chain({
      hops: [
        { node_id: a, port: 43000 },
        { node_id: b, port: 43000 },
        { node_id: c, port: 43000 },
      ],
    });
    const inbound = await t.f.inbound({ node_id: a, port: 6443, chain_id: ch.id });
    const ids = [a, b, c, other];
    const before = await revisionsOf(t.bed, ids);
    const blocked = await refusal(deleteChain(t.bed.ctx(), ch.id));
    expect(blocked.type).toBe('conflict');
    expect(blocked.extra).toEqual({ blocked_by: { inbounds: [inbound.id] } });
    expect(blocked.message).toMatch(/inbound/);
    expect(await revisionsOf(t.bed, ids)).toEqual(before);

    await deleteInbound(t.bed.ctx(), inbound.id);
    const afterInbound = await revisionsOf(t.bed, ids);
    await deleteChain(t.bed.ctx(), ch.id);
    expect(await refusal(getChain(t.bed.ctx(), ch.id))).toMatchObject({ type: 'not-found' });
    expect(await t.bed.deps.db.selectFrom('chain_hops').selectAll().where('chain_id', '=', ch.id).execute()).toEqual([]);
    expect(await revisionsOf(t.bed, ids)).toEqual(plusOne(afterInbound, [a, b, c]));
    const audit = await auditOf(t.bed, ch.id);
    expect(audit.map((x) => x.action)).toEqual(['chain.created', 'chain.deleted']);
    expect(audit[1]).toMatchObject({ actor_id: TEST_OWNER.id, entity_type: 'chain' });
    expect(audit[1]?.details).toMatchObject({ name: ch.name, bumped_nodes: [a, b, c].sort() });
    // Its nodes are free to go now.
    await deleteNode(t.bed.ctx(), b);
    expect(await refusal(deleteChain(t.bed.ctx(), ch.id))).toMatchObject({ type: 'not-found' });
  });
});

describe('assertInboundFitsChain (the rule of chains the inbounds use cases call)', () => {
  it('passes only for the first hop node; an unknown chain or another node is a ValidationError on chain_id', async () => {
    const [a, b] = [await node(), await node()];
    const ch = await t.f.chain({
      hops: [
        { node_id: a, port: 44000 },
        { node_id: b, port: 44000 },
      ],
    });
    const fits = (chainId: string, nodeId: string) => unitOfWork(t.bed.deps, (uow) => assertInboundFitsChain(uow.db, chainId, nodeId));
    await expect(fits(ch.id, a)).resolves.toBeUndefined();
    await expect(fits(ch.id, b)).rejects.toMatchObject({
      type: 'validation',
      errors: { chain_id: `chain ${ch.id} starts at node ${a}, not at node ${b}` },
    });
    await expect(fits('chn_missing', a)).rejects.toMatchObject({
      type: 'validation',
      errors: { chain_id: 'no chain chn_missing' },
    });
  });
});

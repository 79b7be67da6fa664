import { deleteInbound, getChain, parseInput, UpdateChainInput, updateChain } from '@svc/domain';
import { uniqueName } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { auditOf, fileTestbed, inputErrors, plusOne, refusal, revisionsOf } from '../support.ts';

const t = fileTestbed();

const hops = (...list: Array<[string, number]>) => list.map(([node_id, port]) => ({ node_id, port }));
const update = (id: string, input: Record<string, unknown>) => updateChain(t.bed.ctx(), id, parseInput(UpdateChainInput, input));
const node = async () => (await t.f.node()).id;
const chain = (...list: Array<[string, number]>) => t.f.chain({ hops: hops(...list) });
const updates = async (id: string) => (await auditOf(t.bed, id)).filter((x) => x.action === 'chain.updated');

describe('updateChain', () => {
  it('a rename merges (hops untouched), bumps nothing, and is audited', async () => {
    const [a, b] = [await node(), await node()];
    const c = await chain([a, 37000], [b, 37000]);
    const before = await revisionsOf(t.bed, [a, b]);
    t.bed.clock.advance(1000);
    const res = await update(c.id, { name: 'renamed-chain' });
    expect(res).toMatchObject({
      name: 'renamed-chain',
      hops: [{ node_id: a }, { node_id: b }],
      updated_at: t.bed.clock.now().toISOString(),
    });
    expect(await revisionsOf(t.bed, [a, b])).toEqual(before);
    expect((await updates(c.id))[0]?.details).toEqual({ changed: ['name'], name: { from: c.name, to: 'renamed-chain' } });
  });

  it('hops replace the whole list and bump every old and new hop node plus the nodes of inbounds using the chain', async () => {
    const [a, b, c, d, other] = [await node(), await node(), await node(), await node(), await node()];
    const ch = await chain([a, 38000], [b, 38000], [c, 38000]);
    await t.f.inbound({ node_id: a, port: 8443, chain_id: ch.id });
    const ids = [a, b, c, d, other];
    const before = await revisionsOf(t.bed, ids);

    const res = await update(ch.id, { hops: hops([a, 38001], [d, 38001]) });
    expect(res.hops).toEqual([
      { position: 0, node_id: a, port: 38001 },
      { position: 1, node_id: d, port: 38001 },
    ]);
    expect(await revisionsOf(t.bed, ids)).toEqual(plusOne(before, [a, b, c, d]));
    const rows = await t.bed.deps.db
      .selectFrom('chain_hops')
      .select(['node_id', 'port'])
      .where('chain_id', '=', ch.id)
      .orderBy('position')
      .execute();
    expect(rows).toEqual(hops([a, 38001], [d, 38001]));

    // The freed (node, port) pairs are available to another chain.
    await chain([b, 38000], [c, 38000]);

    expect((await updates(ch.id))[0]?.details).toEqual({
      changed: ['hops'],
      hops: { from: hops([a, 38000], [b, 38000], [c, 38000]), to: hops([a, 38001], [d, 38001]) },
      bumped_nodes: [a, b, c, d].sort(),
    });
  });

  it('the nodes of inbounds routed through the chain are bumped with the hops, even one off the first hop', async () => {
    const [a, b, c, stray] = [await node(), await node(), await node(), await node()];
    const ch = await chain([a, 39000], [b, 39000]);
    const routed = await t.f.inbound({ node_id: a, port: 9443, chain_id: ch.id });
    // An inbound off the first hop cannot be made through the use cases any more; legacy data can hold one.
    await t.bed.deps.db
      .insertInto('inbounds')
      .values({
        id: 'inb_legacy_stray',
        node_id: stray,
        profile_id: routed.profile_id,
        tag: 'legacy-9443',
        port: 9443,
        listen: null,
        host: null,
        chain_id: ch.id,
        created_at: t.bed.clock.now(),
        updated_at: t.bed.clock.now(),
      })
      .execute();
    const before = await revisionsOf(t.bed, [a, b, c, stray]);
    await update(ch.id, { hops: hops([a, 39000], [c, 39000]) });
    expect(await revisionsOf(t.bed, [a, b, c, stray])).toEqual(plusOne(before, [a, b, c, stray]));
  });

  it('the same hop list again changes nothing and bumps nothing; keeping its own (node, port) is no conflict', async () => {
    const [a, b, c] = [await node(), await node(), await node()];
    const ch = await chain([a, 40000], [b, 40000]);
    const before = await revisionsOf(t.bed, [a, b, c]);
    await update(ch.id, { hops: hops([a, 40000], [b, 40000]) });
    expect(await revisionsOf(t.bed, [a, b, c])).toEqual(before);
    await update(ch.id, { hops: hops([a, 40000], [b, 40000], [c, 40000]) });
    expect(await revisionsOf(t.bed, [a, b, c])).toEqual(plusOne(before, [a, b, c]));
  });

  it('the first hop cannot move to another node while inbounds route through the chain (a conflict naming them); its port and later hops can', async () => {
    const [a, b, c] = [await node(), await node(), await node()];
    const ch = await chain([a, 41000], [b, 41000]);
    const inbound = await t.f.inbound({ node_id: a, port: 7443, chain_id: ch.id });
    const before = await revisionsOf(t.bed, [a, b, c]);
    const err = await refusal(update(ch.id, { hops: hops([c, 41000], [b, 41000]) }));
    expect(err.type).toBe('conflict');
    expect(err.extra).toEqual({ blocked_by: { inbounds: [inbound.id] } });
    expect(err.errors).toHaveProperty(['hops.0.node_id']);
    expect(await revisionsOf(t.bed, [a, b, c])).toEqual(before);
    expect((await getChain(t.bed.ctx(), ch.id)).hops.map((h) => h.node_id)).toEqual([a, b]);
    // Changing the later hops, or the first hop's port, keeps the inbounds where they belong.
    await update(ch.id, { hops: hops([a, 41001], [c, 41000]) });
    // Without inbounds the first hop may move.
    await deleteInbound(t.bed.ctx(), inbound.id);
    await update(ch.id, { hops: hops([b, 41000], [c, 41000]) });
  });

  it('the new list is checked like a new chain: its shape, unknown nodes per hop, taken ports naming the blocker; a taken name is a conflict', async () => {
    const [a, b, c] = [await node(), await node(), await node()];
    const ch = await chain([a, 42000], [b, 42000]);
    expect(Object.keys(inputErrors(UpdateChainInput, { hops: hops([a, 42000]) }))).toEqual(['hops']);
    expect(Object.keys(inputErrors(UpdateChainInput, { hops: hops([a, 42000], [a, 42003]) }))).toEqual(['hops.1.node_id']);
    const other = await chain([c, 42001], [b, 42001]);
    const inbound = await t.f.inbound({ node_id: c, port: 42002 });
    expect((await refusal(update(ch.id, { hops: hops([a, 42000], ['nod_missing', 1]) }))).errors).toEqual({
      'hops.1.node_id': 'no node nod_missing',
    });
    const taken = await refusal(update(ch.id, { hops: hops([a, 42000], [b, 42001], [c, 42002]) }));
    expect(taken.type).toBe('conflict');
    expect(taken.errors).toEqual({
      'hops.1.port': `port 42001 of node ${b} is taken by chain ${other.id}`,
      'hops.2.port': `port 42002 of node ${c} is taken by inbound ${inbound.id}`,
    });
    expect(taken.extra).toEqual({ blocked_by: { inbounds: [inbound.id], chains: [other.id] } });
    expect(await refusal(update(ch.id, { name: other.name }))).toMatchObject({ type: 'conflict', errors: { name: 'already taken' } });
    expect((await getChain(t.bed.ctx(), ch.id)).hops).toEqual([
      { position: 0, node_id: a, port: 42000 },
      { position: 1, node_id: b, port: 42000 },
    ]);
  });

  it('an unknown chain is not found', async () => {
    expect(await refusal(update('chn_missing', { name: uniqueName('x') }))).toMatchObject({ type: 'not-found' });
  });
});

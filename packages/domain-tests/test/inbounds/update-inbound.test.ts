import { parseInput, UpdateInboundInput, updateInbound } from '@svc/domain';
import { TEST_OWNER } from '@svc/testkit';
import { beforeAll, describe, expect, it } from 'vitest';
import { auditOf, fileTestbed, plusOne, refusal, revisionsOf } from '../support.ts';

const t = fileTestbed();
let vless: string;
let vmess: string;
beforeAll(async () => {
  vless = (await t.f.profile({ protocol: 'vless' })).id;
  vmess = (await t.f.profile({ protocol: 'vmess', stream: { network: 'ws', security: 'none' } })).id;
});

const update = (id: string, input: Record<string, unknown>) => updateInbound(t.bed.ctx(), id, parseInput(UpdateInboundInput, input));
const node = async () => (await t.f.node()).id;

describe('updateInbound', () => {
  it('a new port re-generates the tag and keeps the other fields; a taken port is a conflict; its own port is not', async () => {
    const n = await node();
    const a = await t.f.inbound({ node_id: n, profile_id: vless, port: 1000, host: 'h.example.com' });
    const b = await t.f.inbound({ node_id: n, profile_id: vmess, port: 1001 });
    expect(await update(a.id, { port: 1002 })).toMatchObject({ port: 1002, tag: 'vless-1002', host: 'h.example.com', profile_id: vless });
    const taken = await refusal(update(a.id, { port: 1001 }));
    expect(taken.type).toBe('conflict');
    expect(taken.extra).toEqual({ blocked_by: { inbounds: [b.id] } });
    await update(a.id, { port: 1002 });
    expect((await update(b.id, { profile_id: vless })).tag).toBe('vless-1001');
  });

  it('an unknown inbound is not found; unknown references are refused per field', async () => {
    const a = await t.f.inbound();
    expect(await refusal(update('inb_nope', { port: 1 }))).toMatchObject({ type: 'not-found' });
    expect(await refusal(update(a.id, { node_id: 'nod_nope', profile_id: 'ipr_nope' }))).toMatchObject({
      type: 'validation',
      errors: { node_id: 'no such node', profile_id: 'no such inbound profile' },
    });
  });

  it('moving an inbound to another node moves the revision of the old and the new node, and of no other', async () => {
    const [from, to, bystander] = [await node(), await node(), await node()];
    const i = await t.f.inbound({ node_id: from, profile_id: vmess, port: 2000 });
    const before = await revisionsOf(t.bed, [from, to, bystander]);
    expect((await update(i.id, { node_id: to })).node_id).toBe(to);
    expect(await revisionsOf(t.bed, [from, to, bystander])).toEqual(plusOne(before, [from, to]));
  });

  it('host only shapes client links: changing or clearing it moves no revision; listen does', async () => {
    const n = await node();
    const i = await t.f.inbound({ node_id: n, profile_id: vmess, port: 2100 });
    const r0 = await revisionsOf(t.bed, [n]);
    expect((await update(i.id, { host: 'cdn.example.com' })).host).toBe('cdn.example.com');
    expect(await revisionsOf(t.bed, [n])).toEqual(r0);
    expect((await update(i.id, { host: null })).host).toBeNull();
    expect(await revisionsOf(t.bed, [n])).toEqual(r0);
    expect((await update(i.id, { listen: '127.0.0.1' })).listen).toBe('127.0.0.1');
    expect(await revisionsOf(t.bed, [n])).toEqual(plusOne(r0, [n]));
  });

  it("setting and clearing chain_id moves the revision of the node and of the chain's hops; a chained inbound cannot leave the first hop's node", async () => {
    const [first, second, third] = [await node(), await node(), await node()];
    const chain = await t.f.chain({
      hops: [
        { node_id: first, port: 31000 },
        { node_id: second, port: 31001 },
        { node_id: third, port: 31002 },
      ],
    });
    const hops = [first, second, third];
    const i = await t.f.inbound({ node_id: first, profile_id: vless, port: 443 });
    let before = await revisionsOf(t.bed, hops);
    await update(i.id, { chain_id: chain.id });
    expect(await revisionsOf(t.bed, hops)).toEqual(plusOne(before, hops));
    const move = await refusal(update(i.id, { node_id: await node() }));
    expect(move.type).toBe('validation');
    expect(move.errors).toHaveProperty('chain_id');
    before = await revisionsOf(t.bed, hops);
    expect((await update(i.id, { chain_id: null })).chain_id).toBeNull();
    expect(await revisionsOf(t.bed, hops)).toEqual(plusOne(before, hops));
  });

  it('an update is audited by the acting admin with what changed, from and to, and the nodes bumped', async () => {
    const n = await node();
    const i = await t.f.inbound({ node_id: n, profile_id: vmess, port: 7100 });
    await update(i.id, { port: 7101, host: 'x.example.com' });
    const row = (await auditOf(t.bed, i.id)).find((a) => a.action === 'inbound.updated');
    expect(row).toMatchObject({ actor_id: TEST_OWNER.id, entity_type: 'inbound' });
    expect(row?.details).toMatchObject({ changed: ['port', 'host'], port: { from: 7100, to: 7101 }, nodes_bumped: [n] });
  });
});

import { CreateInboundInput, createInbound, getInbound, parseInput } from '@svc/domain';
import { TEST_OWNER } from '@svc/testkit';
import { beforeAll, describe, expect, it } from 'vitest';
import { auditOf, fileTestbed, inputErrors, plusOne, refusal, revisionsOf } from '../support.ts';

const t = fileTestbed();
let vless: string;
let vmess: string;
beforeAll(async () => {
  vless = (
    await t.f.profile({
      protocol: 'vless',
      stream: { network: 'tcp', security: 'reality', reality: { dest: 'www.example.com:443', server_names: ['www.example.com'] } },
    })
  ).id;
  vmess = (await t.f.profile({ protocol: 'vmess', stream: { network: 'ws', security: 'none' } })).id;
});

const create = (input: Record<string, unknown>) => createInbound(t.bed.ctx(), parseInput(CreateInboundInput, input));
const node = async () => (await t.f.node()).id;

describe('createInbound', () => {
  it('binds a profile to a port of a node: the tag is generated, the node (and only it) gets a new revision, audited', async () => {
    const [n, other] = [await node(), await node()];
    const before = await revisionsOf(t.bed, [n, other]);
    const inbound = await create({ node_id: n, profile_id: vless, port: 443, listen: '0.0.0.0', host: 'edge.example.com' });
    expect(inbound).toMatchObject({
      node_id: n,
      profile_id: vless,
      port: 443,
      tag: 'vless-443',
      listen: '0.0.0.0',
      host: 'edge.example.com',
      chain_id: null,
    });
    expect(inbound.id).toMatch(/^inb_/);
    expect(inbound.created_at).toMatch(/Z$/);
    expect(await revisionsOf(t.bed, [n, other])).toEqual(plusOne(before, [n]));
    expect(await getInbound(t.bed.ctx(), inbound.id)).toEqual(inbound);
    const audit = await auditOf(t.bed, inbound.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ action: 'inbound.created', actor_type: 'admin', actor_id: TEST_OWNER.id, entity_type: 'inbound' });
  });

  it('listen is an IP literal, host a host name or IP, port an integer 1-65535; node, profile and port are required, nothing else is taken', async () => {
    expect((await create({ node_id: await node(), profile_id: vmess, port: 80, listen: '::' })).listen).toBe('::');
    const input = { node_id: 'nod_x', profile_id: vmess };
    expect(inputErrors(CreateInboundInput, { ...input, port: 81, listen: 'localhost', host: 'http://x/' })).toMatchObject({
      listen: expect.any(String),
      host: expect.any(String),
    });
    for (const port of [0, 65536, 1.5, '443'])
      expect(inputErrors(CreateInboundInput, { ...input, port }), String(port)).toHaveProperty('port');
    expect(Object.keys(inputErrors(CreateInboundInput, {}))).toEqual(expect.arrayContaining(['node_id', 'profile_id', 'port']));
    expect(inputErrors(CreateInboundInput, { ...input, port: 82, tag: 'mine' })).not.toEqual({});
  });

  it('an unknown node, profile and chain are refused with a reason per field', async () => {
    const err = await refusal(create({ node_id: 'nod_nope', profile_id: 'ipr_nope', port: 443, chain_id: 'chn_nope' }));
    expect(err).toMatchObject({
      type: 'validation',
      errors: { node_id: 'no such node', profile_id: 'no such inbound profile', chain_id: 'no such chain' },
    });
  });

  it('a port is unique per node across inbounds: a conflict naming the inbound; the same port on another node is fine', async () => {
    const [a, b] = [await node(), await node()];
    const first = await create({ node_id: a, profile_id: vless, port: 8443 });
    const dup = await refusal(create({ node_id: a, profile_id: vmess, port: 8443 }));
    expect(dup.type).toBe('conflict');
    expect(dup.extra).toEqual({ blocked_by: { inbounds: [first.id] } });
    expect(dup.errors?.port).toContain(first.id);
    await create({ node_id: b, profile_id: vmess, port: 8443 });
  });

  it('a port is unique per node across chain hops too: a conflict naming the chain', async () => {
    const [a, b] = [await node(), await node()];
    const chain = await t.f.chain({
      hops: [
        { node_id: a, port: 20000 },
        { node_id: b, port: 20001 },
      ],
    });
    const err = await refusal(create({ node_id: a, profile_id: vmess, port: 20000 }));
    expect(err.type).toBe('conflict');
    expect(err.extra).toEqual({ blocked_by: { chains: [chain.id] } });
    expect(err.message).toContain(chain.id);
    await create({ node_id: b, profile_id: vmess, port: 20000 });
  });

  it("with chain_id the inbound must live on the chain's first hop node; the node and the chain's hops get new revisions", async () => {
    const [first, second, bystander] = [await node(), await node(), await node()];
    const chain = await t.f.chain({
      hops: [
        { node_id: first, port: 30000 },
        { node_id: second, port: 30001 },
      ],
    });
    const wrong = await refusal(create({ node_id: second, profile_id: vless, port: 443, chain_id: chain.id }));
    expect(wrong.type).toBe('validation');
    expect(wrong.errors?.chain_id).toContain(first);
    const ids = [first, second, bystander];
    const before = await revisionsOf(t.bed, ids);
    const ok = await create({ node_id: first, profile_id: vless, port: 443, chain_id: chain.id });
    expect(ok.chain_id).toBe(chain.id);
    expect(await revisionsOf(t.bed, ids)).toEqual(plusOne(before, [first, second]));
  });
});

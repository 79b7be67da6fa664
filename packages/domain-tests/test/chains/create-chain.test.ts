import { CreateChainInput, createChain, getChain, parseInput } from '@svc/domain';
import { TEST_OWNER, uniqueName } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { auditOf, fileTestbed, inputErrors, plusOne, refusal, revisionsOf } from '../support.ts';

const t = fileTestbed();

const hops = (...list: Array<[string, number]>) => list.map(([node_id, port]) => ({ node_id, port }));
const create = (input: Record<string, unknown>) => createChain(t.bed.ctx(), parseInput(CreateChainInput, input));
const node = async () => (await t.f.node()).id;
const chainCount = async () => (await t.bed.deps.db.selectFrom('chains').select('id').execute()).length;

describe('createChain', () => {
  it('creates a chain with ordered hops (positions from 0), each hop with its own sealed 32-byte secret that no view shows', async () => {
    const [a, b, c] = [await node(), await node(), await node()];
    const chain = await create({ name: ' fra-ams-lon ', hops: hops([a, 30001], [b, 30002], [c, 30003]) });
    expect(chain).toEqual({
      id: expect.stringMatching(/^chn_[0-9a-z]{26}$/),
      name: 'fra-ams-lon',
      hops: [
        { position: 0, node_id: a, port: 30001 },
        { position: 1, node_id: b, port: 30002 },
        { position: 2, node_id: c, port: 30003 },
      ],
      created_at: t.bed.clock.now().toISOString(),
      updated_at: t.bed.clock.now().toISOString(),
    });
    expect(await getChain(t.bed.ctx(), chain.id)).toEqual(chain);
    const rows = await t.bed.deps.db.selectFrom('chain_hops').selectAll().where('chain_id', '=', chain.id).orderBy('position').execute();
    expect(rows.map((r) => r.node_id)).toEqual([a, b, c]);
    const secrets = rows.map((r) => t.bed.deps.secrets.open(r.secret));
    expect(new Set(secrets).size).toBe(3);
    for (const [i, secret] of secrets.entries()) {
      expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
      expect(rows[i]?.secret).not.toContain(secret); // sealed at rest
      expect(JSON.stringify(chain)).not.toContain(secret);
      expect(JSON.stringify(chain)).not.toContain(rows[i]?.secret);
    }
  });

  it('bumps exactly the hop nodes', async () => {
    const [a, b, c, other] = [await node(), await node(), await node(), await node()];
    const ids = [a, b, c, other];
    const before = await revisionsOf(t.bed, ids);
    await create({ name: uniqueName('c'), hops: hops([c, 31000], [a, 31000]) });
    expect(await revisionsOf(t.bed, ids)).toEqual(plusOne(before, [a, c]));
  });

  it('a name of 1-64 characters and 2-16 hops, ports 1-65535, each node once: a reason per field otherwise', () => {
    const [a, b] = ['nod_a', 'nod_b'];
    const cases: Array<[unknown, string[]]> = [
      [{ hops: hops([a, 1], [b, 1]) }, ['name']],
      [{ name: '', hops: hops([a, 1], [b, 1]) }, ['name']],
      [{ name: 'x'.repeat(65), hops: hops([a, 1], [b, 1]) }, ['name']],
      [{ name: 'bad\u0007name', hops: hops([a, 1], [b, 1]) }, ['name']],
      [{ name: 'c' }, ['hops']],
      [{ name: 'c', hops: hops([a, 1]) }, ['hops']],
      [{ name: 'c', hops: [] }, ['hops']],
      [{ name: 'c', hops: Array.from({ length: 17 }, (_, i) => ({ node_id: `nod_${i}`, port: 100 + i })) }, ['hops']],
      [{ name: 'c', hops: hops([a, 0], [b, 65536]) }, ['hops.0.port', 'hops.1.port']],
      [{ name: 'c', hops: [{ node_id: a, port: 1.5 }, { node_id: b }] }, ['hops.0.port', 'hops.1.port']],
      [
        {
          name: 'c',
          hops: [
            { node_id: a, port: 10 },
            { node_id: '', port: 11 },
          ],
        },
        ['hops.1.node_id'],
      ],
      [
        {
          name: 'c',
          hops: [
            { node_id: a, port: 10, secret: 'x' },
            { node_id: b, port: 11 },
          ],
        },
        ['hops.0'],
      ],
      [{ name: 'c', hops: hops([a, 10], [b, 11]), extra: 1 }, ['(body)']],
      [{ name: 'c', hops: hops([a, 10], [b, 11], [a, 12]) }, ['hops.2.node_id']],
    ];
    for (const [input, fields] of cases)
      expect(Object.keys(inputErrors(CreateChainInput, input)).sort(), JSON.stringify(input)).toEqual(fields.sort());
  });

  it('an unknown hop node is refused naming the hop', async () => {
    const a = await node();
    const err = await refusal(create({ name: uniqueName('c'), hops: hops([a, 32000], ['nod_missing', 32000], ['nod_gone', 32001]) }));
    expect(err).toMatchObject({
      type: 'validation',
      errors: { 'hops.1.node_id': 'no node nod_missing', 'hops.2.node_id': 'no node nod_gone' },
    });
  });

  it('a taken name is a conflict naming the field', async () => {
    const first = await t.f.chain();
    const err = await refusal(create({ name: first.name, hops: hops([await node(), 33001], [await node(), 33001]) }));
    expect(err).toMatchObject({ type: 'conflict', errors: { name: 'already taken' } });
  });

  it('a hop on a port an inbound of that node uses is a conflict naming the inbound; the same port on another node is free', async () => {
    const [a, b, c] = [await node(), await node(), await node()];
    const inbound = await t.f.inbound({ node_id: b, port: 443 });
    const err = await refusal(create({ name: uniqueName('c'), hops: hops([a, 443], [b, 443]) }));
    expect(err.type).toBe('conflict');
    expect(err.errors).toEqual({ 'hops.1.port': `port 443 of node ${b} is taken by inbound ${inbound.id}` });
    expect(err.extra).toEqual({ blocked_by: { inbounds: [inbound.id] } });
    expect(err.message).toContain(inbound.id);
    const before = await revisionsOf(t.bed, [a, b, c]);
    await create({ name: uniqueName('c'), hops: hops([a, 443], [c, 443]) });
    expect(await revisionsOf(t.bed, [a, b, c])).toEqual(plusOne(before, [a, c]));
  });

  it("a hop on another chain's (node, port) is a conflict naming that chain, and nothing is written or bumped", async () => {
    const [a, b, c] = [await node(), await node(), await node()];
    const first = await create({ name: uniqueName('c'), hops: hops([a, 34000], [b, 34001]) });
    const before = await revisionsOf(t.bed, [a, b, c]);
    const chains = await chainCount();
    const err = await refusal(create({ name: uniqueName('c'), hops: hops([c, 34000], [b, 34001]) }));
    expect(err.type).toBe('conflict');
    expect(err.errors).toEqual({ 'hops.1.port': `port 34001 of node ${b} is taken by chain ${first.id}` });
    expect(err.extra).toEqual({ blocked_by: { chains: [first.id] } });
    expect(await revisionsOf(t.bed, [a, b, c])).toEqual(before);
    expect(await chainCount()).toBe(chains);
  });

  it('creating is audited by the acting admin with the hops and the bumped nodes', async () => {
    const [a, b] = [await node(), await node()];
    const c = await create({ name: uniqueName('c'), hops: hops([a, 35000], [b, 35001]) });
    const audit = await auditOf(t.bed, c.id);
    expect(audit.map((x) => x.action)).toEqual(['chain.created']);
    expect(audit[0]).toMatchObject({ actor_type: 'admin', actor_id: TEST_OWNER.id, entity_type: 'chain' });
    expect(audit[0]?.details).toEqual({ name: c.name, hops: hops([a, 35000], [b, 35001]), bumped_nodes: [a, b].sort() });
  });
});

import { parseInput, UpdateNodeInput, updateNode } from '@svc/domain';
import { uniqueName } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { auditOf, fileTestbed, plusOne, refusal, revisionsOf } from '../support.ts';

const t = fileTestbed();

const update = (id: string, input: Record<string, unknown>) => updateNode(t.bed.ctx(), id, parseInput(UpdateNodeInput, input));

describe('updateNode', () => {
  it('merges: only the given fields change, and each change is audited from/to', async () => {
    const node = await t.f.node({ address: 'before.example.net' });
    t.bed.clock.advance(1000);
    const renamed = await update(node.id, { name: 'renamed-node' });
    expect(renamed).toMatchObject({ name: 'renamed-node', address: 'before.example.net', admin_status: 'enabled' });
    expect(renamed.updated_at).toBe(t.bed.clock.now().toISOString());
    expect(renamed.created_at).not.toBe(renamed.updated_at);
    const moved = await update(node.id, { address: '192.0.2.10', admin_status: 'disabled' });
    expect(moved).toMatchObject({ name: 'renamed-node', address: '192.0.2.10', admin_status: 'disabled' });

    const audit = (await auditOf(t.bed, node.id)).filter((a) => a.action === 'node.updated');
    expect(audit).toHaveLength(2);
    expect(audit[0]?.details).toMatchObject({ changed: ['name'], name: { from: node.name, to: 'renamed-node' } });
    expect(audit[1]?.details).toMatchObject({
      changed: ['address', 'admin_status'],
      address: { from: 'before.example.net', to: '192.0.2.10' },
      admin_status: { from: 'enabled', to: 'disabled' },
    });
  });

  it("another node's name is a conflict naming the field; the node's own name is not", async () => {
    const [a, b] = [await t.f.node(), await t.f.node()];
    expect(await refusal(update(a.id, { name: b.name }))).toMatchObject({ type: 'conflict', errors: { name: 'already taken' } });
    expect((await update(a.id, { name: a.name })).name).toBe(a.name);
    expect(await refusal(update('nod_missing', { name: 'x' }))).toMatchObject({ type: 'not-found' });
  });

  it('a new address bumps exactly the nodes that dial it (the previous hop of each of its chains)', async () => {
    const [a, b, c, d, e] = [await t.f.node(), await t.f.node(), await t.f.node(), await t.f.node(), await t.f.node()];
    // a -> b -> c, and e -> b: a and e dial b; b dials c; d is unrelated.
    await t.f.chain({
      hops: [
        { node_id: a.id, port: 20001 },
        { node_id: b.id, port: 20001 },
        { node_id: c.id, port: 20001 },
      ],
    });
    await t.f.chain({
      hops: [
        { node_id: e.id, port: 20002 },
        { node_id: b.id, port: 20002 },
      ],
    });
    const ids = [a.id, b.id, c.id, d.id, e.id];
    const before = await revisionsOf(t.bed, ids);

    // The name and disabling change nothing a node runs.
    await update(b.id, { name: uniqueName('renamed'), admin_status: 'disabled' });
    expect(await revisionsOf(t.bed, ids)).toEqual(before);

    await update(b.id, { address: 'moved.example.net' });
    const dialersBumped = plusOne(before, [a.id, e.id]);
    expect(await revisionsOf(t.bed, ids)).toEqual(dialersBumped);

    // The same address again changes nothing.
    await update(b.id, { address: 'moved.example.net' });
    expect(await revisionsOf(t.bed, ids)).toEqual(dialersBumped);

    // The head of a chain is dialed by nobody.
    await update(a.id, { address: '192.0.2.77' });
    expect(await revisionsOf(t.bed, ids)).toEqual(dialersBumped);

    // Re-enabling bumps the node itself (its agent gets a complete snapshot); enabling an enabled node does not.
    await update(b.id, { admin_status: 'enabled' });
    const reenabled = plusOne(dialersBumped, [b.id]);
    expect(await revisionsOf(t.bed, ids)).toEqual(reenabled);
    await update(b.id, { admin_status: 'enabled' });
    expect(await revisionsOf(t.bed, ids)).toEqual(reenabled);
  });
});
